# LineUp Hub as a container: `docker compose up` (compose.yaml) runs it beside PostgreSQL.
# Without LINEUP_DATABASE_URL it keeps embedded SQLite in the /data volume, with the
# generated secret key. tests/e2e/test_packaging.py installs the wheel as this file does.
ARG PYTHON_VERSION=3.11
# Debian 13 ("trixie"): its postgresql-client is 17, the major of compose.yaml's server, so
# `lineup backup` in the container can pg_dump it (pg_dump refuses a newer server).
ARG DEBIAN_RELEASE=trixie

# The wheel, built from the source alone (no dependencies: those come pinned below).
FROM python:${PYTHON_VERSION}-slim-${DEBIAN_RELEASE} AS wheel
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY hub ./hub
COPY plugins ./plugins
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:${PYTHON_VERSION}-slim-${DEBIAN_RELEASE}
# pg_dump and pg_restore, which `lineup backup` and `lineup restore` run on PostgreSQL.
RUN apt-get update \
    && apt-get install --yes --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
# The hub and the channels it can deliver through; the same extras as `make run`.
ARG EXTRAS=server,email,telegram,feishu,slack,push,a2a,mcp
COPY constraints.txt /tmp/constraints.txt
COPY --from=wheel /wheels /tmp/wheels
# Held to the versions the tests ran with (constraints.txt, `make constraints`).
RUN pip install --no-cache-dir --constraint /tmp/constraints.txt \
        "$(ls /tmp/wheels/lineup_hub-*.whl)[${EXTRAS}]" \
    && rm -rf /tmp/wheels /tmp/constraints.txt

RUN useradd --system --uid 10001 --user-group --home-dir /data --no-create-home lineup \
    && mkdir /data && chown lineup:lineup /data
# Every setting is LINEUP_* (README "Configuration", `lineup config`); these suit a container.
# PYTHONMALLOC is the allocator `lineup serve` would start itself again with (hub/cli.py).
ENV LINEUP_HOST=0.0.0.0 \
    LINEUP_PORT=8000 \
    LINEUP_DATA_DIR=/data \
    PYTHONUNBUFFERED=1 \
    PYTHONMALLOC=malloc
VOLUME /data
# The working directory is where `lineup serve` looks for lineup.toml: the volume's.
WORKDIR /data
USER lineup
EXPOSE 8000

# Ready, not just up: the database answers, migrations are applied, the workers run.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('LINEUP_PORT', '8000') + '/readyz', timeout=4)"]

ENTRYPOINT ["lineup"]
CMD ["serve"]
