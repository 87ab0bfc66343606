// The action hash computed as the hub computes it, on the vectors both SDKs share
// (tests/protocol/action_hash_vectors.json), and a decision checked before acting on it.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { describe, test } from "node:test";

import {
  ActionMismatch,
  InvalidAction,
  NotApproved,
  ProposedAction,
  Resolution,
  actionHash,
  canonicalJson,
  parseExact,
} from "../../src/index.ts";
import { pythonFloatRepr } from "../../src/actions.ts";

const file = new URL("../../../../tests/protocol/action_hash_vectors.json", import.meta.url);
const { vectors } = JSON.parse(fs.readFileSync(file, "utf8")) as {
  vectors: {
    name: string;
    kind: string;
    fieldsJson: string;
    fromJavaScriptNumbers: boolean;
    canonical: string;
    hash: string;
  }[];
};

describe("the shared action hash vectors", () => {
  test("there are vectors to check", () => assert.ok(vectors.length >= 10));
  for (const vector of vectors) {
    test(vector.name, () => {
      const exact = parseExact(vector.fieldsJson) as Record<string, unknown>;
      assert.equal(canonicalJson(vector.kind, exact), vector.canonical);
      assert.equal(actionHash(vector.kind, exact), vector.hash);
      if (vector.fromJavaScriptNumbers) {
        // An agent's own action holds plain numbers: the hub reads what JSON.stringify wrote.
        const plain = JSON.parse(vector.fieldsJson) as Record<string, unknown>;
        assert.equal(actionHash(vector.kind, plain), vector.hash);
        assert.equal(actionHash(vector.kind, JSON.parse(JSON.stringify(plain))), vector.hash);
      }
    });
  }
});

describe("Python's float repr", () => {
  for (const [value, expected] of [
    [0.1, "0.1"],
    [1e-5, "1e-05"],
    [1e-4, "0.0001"],
    [1e16, "1e+16"],
    [1e15, "1000000000000000.0"],
    [1.5e300, "1.5e+300"],
    [-2.5e-8, "-2.5e-08"],
    [3, "3.0"],
    [-0, "-0.0"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [123456.789, "123456.789"],
  ] as const) {
    test(`${value} → ${expected}`, () => assert.equal(pythonFloatRepr(value), expected));
  }
});

const MIGRATION = new ProposedAction({
  kind: "db.migration",
  fields: { database: "prod-eu", statements: ["ALTER TABLE users ADD plan text"], batchSize: 500 },
  editable: ["statements", "batchSize"],
});

function decision(response: Record<string, unknown>): Resolution {
  const payload = {
    interactionId: "int_1",
    response,
    respondedBy: "user:usr_1",
    respondedAt: "2026-12-06T05:00:00Z",
    via: "web",
  };
  // As the agent receives it: parsed from the frame's text, numbers as written.
  return Resolution.fromPayload(parseExact(JSON.stringify(payload)) as Record<string, unknown>);
}

describe("a decision bound to an action", () => {
  test("the proposed action, approved, is what is acted on", () => {
    const answer = decision({
      optionId: "approve",
      actionHash: MIGRATION.hash,
      action: MIGRATION.summary(),
    });
    assert.deepEqual(answer.approvedAction(MIGRATION), MIGRATION.fields);
    assert.equal(answer.edited, false);
  });

  test("an edit of an editable field is acted on, checked against the proposal", () => {
    const fields = { ...MIGRATION.fields, batchSize: 100 };
    const answer = decision({
      optionId: "approve",
      actionHash: actionHash("db.migration", fields),
      action: { kind: "db.migration", fields },
      editedFrom: MIGRATION.hash,
    });
    assert.deepEqual(answer.approvedAction(MIGRATION), fields);
  });

  test("a float the hub wrote as 100.0 is hashed as the hub hashed it", () => {
    const text =
      '{"interactionId":"int_1","respondedBy":"user:u","respondedAt":"2026-12-06T05:00:00Z","via":"web",' +
      `"response":{"optionId":"approve","editedFrom":"${MIGRATION.hash}",` +
      '"actionHash":"HASH","action":{"kind":"db.migration","fields":' +
      '{"batchSize":100.0,"database":"prod-eu","statements":["ALTER TABLE users ADD plan text"]}}}}';
    const hub = "sha256:" + "0".repeat(64);
    const exactHash = actionHash(
      "db.migration",
      parseExact(
        '{"batchSize":100.0,"database":"prod-eu","statements":["ALTER TABLE users ADD plan text"]}',
      ) as Record<string, unknown>,
    );
    assert.notEqual(exactHash, actionHash("db.migration", { ...MIGRATION.fields, batchSize: 100 }));
    const answer = Resolution.fromPayload(
      parseExact(text.replace("HASH", exactHash)) as Record<string, unknown>,
    );
    assert.deepEqual(answer.approvedAction(MIGRATION), { ...MIGRATION.fields, batchSize: 100 });
    const forged = Resolution.fromPayload(
      parseExact(text.replace("HASH", hub)) as Record<string, unknown>,
    );
    assert.throws(() => forged.approvedAction(MIGRATION), ActionMismatch);
  });

  test("a decision bound to any other action is refused", () => {
    const elsewhere = { ...MIGRATION.fields, database: "prod-us" }; // not editable
    const hash = actionHash("db.migration", elsewhere);
    const answer = decision({
      optionId: "approve",
      actionHash: hash,
      action: { kind: "db.migration", fields: elsewhere },
      editedFrom: MIGRATION.hash,
    });
    assert.throws(() => answer.approvedAction(MIGRATION), ActionMismatch);
    const lying = decision({
      optionId: "approve",
      actionHash: MIGRATION.hash,
      action: { kind: "db.migration", fields: elsewhere },
    });
    assert.throws(() => lying.approvedAction(MIGRATION), ActionMismatch);
  });

  test("a no is not an approval", () => {
    const answer = decision({
      optionId: "reject",
      actionHash: MIGRATION.hash,
      action: MIGRATION.summary(),
    });
    assert.throws(() => answer.approvedAction(MIGRATION), NotApproved);
  });

  test("an action the hub would refuse is refused here", () => {
    assert.throws(
      () => new ProposedAction({ kind: "k", fields: { a: {} }, editable: ["a"] }),
      InvalidAction,
    );
    assert.throws(
      () => new ProposedAction({ kind: "k", fields: {}, editable: ["missing"] }),
      InvalidAction,
    );
    assert.throws(() => new ProposedAction({ kind: "", fields: {} }), InvalidAction);
    assert.throws(() => MIGRATION.edited({ database: "x" }), /cannot be edited/);
    assert.throws(() => MIGRATION.edited({ batchSize: "many" }), /must stay number/);
  });
});
