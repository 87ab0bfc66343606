// Decisions bound to the exact action: the hub refuses an answer to an action the person did
// not see (a stale hash), and the agent acts only on what the decision is bound to.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import {
  ActionMismatch,
  Agent,
  Backoff,
  ProposedAction,
  actionHash,
  shortHash,
} from "../../src/index.ts";
import {
  HUB,
  Refused,
  api,
  askedCard,
  confirm,
  pairingCode,
  person,
  respond,
  skip,
} from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

const MIGRATION = new ProposedAction({
  kind: "db.migration",
  fields: {
    database: "prod-eu",
    statements: ["ALTER TABLE users ADD plan text", "UPDATE users SET plan = 'free'"],
    batchSize: 500,
  },
  editable: ["statements", "batchSize"],
});

describe("exact actions", { skip }, () => {
  let agent: Agent;

  before(async () => {
    agent = new Agent(HUB, {
      pairingCode: await pairingCode(),
      name: "Migrator",
      stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-actions-")),
      backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
      logger: quiet,
    });
    await agent.start();
    await confirm(agent.agentId!, "Migrator");
  });

  after(async () => {
    await agent?.close();
  });

  test("a stale hash is refused; an edit on the web reaches the agent bound to its new hash", async () => {
    const asking = agent.requestApproval("Run the users migration?", {
      impact: "Adds a column to users in production.",
      action: MIGRATION,
    });
    const asked = await askedCard("Run the users migration?");
    assert.equal(
      actionHash(asked.action.kind, asked.action.fields),
      MIGRATION.hash,
      "the hub hashes as the SDK does",
    );

    await assert.rejects(
      respond(asked.id, { optionId: "approve", actionHash: actionHash("db.migration", {}) }),
      (error: unknown) =>
        error instanceof Refused &&
        error.status === 409 &&
        error.body.error.code === "action_changed",
    );
    assert.equal(
      (await api("GET", `/interactions/${asked.id}`)).status,
      "pending",
      "the stale answer changed nothing",
    );

    await respond(asked.id, {
      optionId: "approve",
      actionHash: MIGRATION.hash,
      action: { statements: ["ALTER TABLE users ADD plan text"], batchSize: 100 },
    });
    const answer = await asking;
    const edited = {
      ...MIGRATION.fields,
      statements: ["ALTER TABLE users ADD plan text"],
      batchSize: 100,
    };
    assert.equal(answer.edited, true);
    assert.equal(answer.editedFrom, MIGRATION.hash);
    assert.equal(answer.actionHash, actionHash("db.migration", edited));
    assert.deepEqual(answer.approvedAction(MIGRATION), edited);
    // Never onto another action: the SDK recomputes the hash and refuses.
    const elsewhere = new ProposedAction({
      kind: "db.migration",
      fields: { ...MIGRATION.fields, database: "prod-us" },
      editable: ["batchSize"],
    });
    assert.throws(() => answer.approvedAction(elsewhere), ActionMismatch);
  });

  test("Telegram approves the exact action it showed", async () => {
    const restart = new ProposedAction({
      kind: "shell.command",
      fields: { command: "systemctl restart api", host: "web-1" },
    });
    const asking = agent.requestApproval("Restart the API?", { risk: "high", action: restart });
    const card = await person("/telegram/card", { title: "Restart the API?" });
    assert.match(card.text, /shell\.command/);
    assert.ok(card.text.includes(shortHash(restart.hash)), "the fingerprint is shown");
    await person("/telegram/press", { title: "Restart the API?", label: "Approve" });
    await person("/telegram/press", { title: "Restart the API?", label: "Yes" }); // high risk: a second step
    const answer = await asking;
    assert.equal(answer.via, "telegram");
    assert.equal(answer.actionHash, restart.hash);
    assert.deepEqual(answer.approvedAction(restart), restart.fields);
  });
});
