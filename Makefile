# LineUp Hub — the two commands: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=
# What serving installs: the hub and the channels it can deliver through (no test tools).
SERVE_EXTRAS := server,email,telegram,feishu,slack,push,a2a,mcp
# The versions the tests ran with (`make constraints`); every install here and in the
# Dockerfile is held to them.
CONSTRAINTS := constraints.txt

.PHONY: run test lint constraints coding-clis axe-core node typescript-sdk protocol-types mcp-conformance test-sqlite test-postgres migrations clean chromium translations screenshots fuzz faults bench soak

# Reinstall when pyproject.toml or the pins change; otherwise the stamps keep `make` quick.
# `.served` is the hub alone; `.installed` adds the test toolchain (and so serves too).
$(VENV)/.served: pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[$(SERVE_EXTRAS)]'
	touch $@

$(VENV)/.installed: pyproject.toml $(CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c $(CONSTRAINTS) -e '.[dev]'
	touch $(VENV)/.served $@

## run: set up and serve the hub on embedded SQLite under ./var (LINEUP_HOST, LINEUP_PORT,
## LINEUP_DATABASE_URL are honoured); installs what serving needs, none of the test tools
run: $(VENV)/.served
	$(BIN)/lineup serve

## constraints: pin constraints.txt to the test environment's versions (run `make test`
## first, so the pins are versions the tests passed with; UPGRADE=1 first moves that
## environment to the newest versions pyproject.toml allows)
constraints: $(VENV)/.installed
	$(if $(UPGRADE),$(BIN)/python -m pip install --quiet --upgrade -e '.[dev]')
	{ echo "# The versions the tests ran with: \`make constraints\` writes this file."; \
	  $(BIN)/python -m pip freeze --exclude-editable --exclude lineup-hub; } > $(CONSTRAINTS)

## test: lint, then every test on SQLite and on a throwaway PostgreSQL; the two suites run
## side by side (each mostly waits on sockets and timers), each one's output shown whole
## when it ends
test: $(VENV)/.installed chromium coding-clis axe-core node typescript-sdk mcp-conformance lint
	$(MAKE) --no-print-directory -j2 --output-sync=target test-sqlite test-postgres

## lint: style, types, and the import rules of docs/architecture.md (contracts in pyproject)
lint: $(VENV)/.installed
	$(BIN)/ruff check hub plugins tests benchmarks scripts
	$(BIN)/ruff format --check hub plugins tests benchmarks scripts
	$(BIN)/mypy hub/core hub/protocol hub/sdk hub/coding_agents
	$(BIN)/lint-imports --no-cache --no-logo

test-sqlite: $(VENV)/.installed
	$(BIN)/pytest $(PYTEST_ARGS)

test-postgres: $(VENV)/.installed
	PG_FSYNC=off scripts/with-postgres $(BIN)/pytest $(PYTEST_ARGS)

## fuzz: the larger fuzzing profiles (LAP frames and the OpenAPI schema), on both databases
fuzz: $(VENV)/.installed
	LINEUP_FUZZ_EXAMPLES=3000 LINEUP_API_FUZZ_EXAMPLES=60 $(BIN)/pytest tests/fuzz
	LINEUP_FUZZ_EXAMPLES=3000 LINEUP_API_FUZZ_EXAMPLES=60 scripts/with-postgres $(BIN)/pytest tests/fuzz

## faults: the fault suite with a 20,000-event kill -9 run, on both databases (on PostgreSQL
## also two hub processes under resends, a slow SMTP relay and lost notifications)
faults: $(VENV)/.installed
	LINEUP_FAULT_EVENTS=20000 $(BIN)/pytest tests/faults
	LINEUP_FAULT_EVENTS=20000 scripts/with-postgres $(BIN)/pytest tests/faults

## soak: the agent chaos test at full length (20 SDK agents for 2 minutes, 100+ socket
## kills), on both databases, and the full-size two-process fault run on PostgreSQL
soak: $(VENV)/.installed
	LINEUP_CHAOS_SECONDS=120 $(BIN)/pytest tests/sdk/test_chaos.py
	LINEUP_CHAOS_SECONDS=120 LINEUP_FAULT_EVENTS=20000 scripts/with-postgres $(BIN)/pytest \
		tests/sdk/test_chaos.py tests/faults/test_two_processes.py

## bench: speed and memory beside this machine's floor, on SQLite and on PostgreSQL with
## fsync on; prints the table and writes benchmarks/results.json (BENCH_ARGS=--quick); then
## the time a coding agent's hook adds to a tool call, from a card to its push, and from a
## remote A2A agent's change to its card (pushed, polled, streamed), on both databases; from
## a person's answer to the MCP agent holding it (answered in the hub, or at the agent's
## terminal), on both; and every page and list of a workspace grown to 50,000 tasks beside 1,000
bench: $(VENV)/.installed
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.run $(BENCH_ARGS)
	$(BIN)/python -m benchmarks.hooks
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.hooks
	$(BIN)/python -m benchmarks.push
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.push
	$(BIN)/python -m benchmarks.a2a_push
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.a2a_push
	$(BIN)/python -m benchmarks.mcp_answers
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.mcp_answers
	$(BIN)/python -m benchmarks.big $(BENCH_ARGS)
	PG_FSYNC=on scripts/with-postgres $(BIN)/python -m benchmarks.big $(BENCH_ARGS)

## coding-clis: the Claude Code and Codex CLIs the coding-agent tests drive (pinned, from npm,
## into .cache/coding-clis)
coding-clis:
	scripts/install-coding-clis > /dev/null

## node: Node.js 22 for the TypeScript SDK's tests and the MCP conformance suite (npm's
## `node` package, into .cache/node; Debian's Node is 20)
node:
	scripts/install-node > /dev/null

## typescript-sdk: the TypeScript SDK's pinned toolchain (tsc, the type generator) for its
## tests, with `npm ci` from its lock file into sdk/typescript/node_modules; the package
## built (sdk/typescript/dist) and linked into the example adapter (examples/typescript)
typescript-sdk: node sdk/typescript/dist/index.js examples/typescript/node_modules/.installed

NPM_22 = PATH="$$(dirname "$$(scripts/install-node)"):$$PATH" npm --no-audit --no-fund --loglevel=error

sdk/typescript/node_modules/.installed: sdk/typescript/package-lock.json
	$(NPM_22) ci --prefix sdk/typescript > /dev/null
	touch $@

sdk/typescript/dist/index.js: sdk/typescript/node_modules/.installed $(wildcard sdk/typescript/src/*.ts)
	cd sdk/typescript && "$$(../../scripts/install-node)" node_modules/typescript/bin/tsc -p tsconfig.build.json
	touch $@

examples/typescript/node_modules/.installed: examples/typescript/package.json
	$(NPM_22) install --prefix examples/typescript --offline --no-package-lock > /dev/null
	touch $@

## protocol-types: regenerate the TypeScript SDK's wire types from the pydantic models in
## hub/protocol (their JSON Schema, through json-schema-to-typescript); a test fails while
## the committed file differs
protocol-types: $(VENV)/.installed typescript-sdk
	$(BIN)/python -m hub.protocol.schema | "$$(scripts/install-node)" \
		sdk/typescript/scripts/generate-types.ts > sdk/typescript/src/protocol.generated.ts.new
	mv sdk/typescript/src/protocol.generated.ts.new sdk/typescript/src/protocol.generated.ts

## mcp-conformance: the official MCP conformance suite the MCP tests run against the hub's
## /mcp/ (pinned, from npm, into .cache/mcp-conformance, with Node.js 22 beside it)
mcp-conformance:
	scripts/install-mcp-conformance > /dev/null

## axe-core: the accessibility checker the browser tests run in every page (pinned, from npm,
## into .cache/axe-core)
axe-core:
	scripts/install-axe-core > /dev/null

## chromium: the browser the UI tests drive (Debian's package; Playwright's own download
## needs the internet)
chromium:
	test -x /usr/bin/chromium || { apt-get update && apt-get install -y chromium; }

## translations: re-extract the pages' and channels' strings, merge them into each catalogue, compile them
translations: $(VENV)/.installed
	$(BIN)/python hub/web/translations/update.py

## screenshots: the inbox, a task with a pending card and the agents page at 1280, 800 and
## 390 px, into docs/screenshots/
screenshots: $(VENV)/.installed chromium
	$(BIN)/python -m tests.e2e.browser.screenshots docs/screenshots

## migrations: write a new migration after changing the models in hub/core/store/ (NAME=what_changed)
migrations: $(VENV)/.installed
	$(BIN)/tortoise -c hub.core.store.migrations_config.TORTOISE_ORM makemigrations --name $(NAME)

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
