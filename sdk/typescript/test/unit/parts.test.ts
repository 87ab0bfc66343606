// The parts that keep an adapter exact over failures: the ledger of handled events, the
// backoff, the pending uplinks and the state file.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import {
  AgentState,
  Backoff,
  DeliveryLedger,
  StateStore,
  normaliseHubUrl,
} from "../../src/index.ts";
import { HubRefused } from "../../src/errors.ts";
import { PendingUplinks } from "../../src/pending.ts";

describe("the delivery ledger", () => {
  test("each sequence is handled once, and the watermark waits for unfinished work", () => {
    const ledger = new DeliveryLedger();
    assert.equal(ledger.begin(3), true);
    assert.equal(ledger.begin(3), false, "a replay of an event in flight");
    assert.equal(ledger.begin(7), true);
    ledger.finish(7);
    assert.equal(ledger.watermark, 2, "3 still runs: a restart must replay it");
    assert.deepEqual(ledger.handled, [7]);
    assert.equal(ledger.begin(7), false, "handled above the watermark: skipped");
    ledger.finish(3);
    assert.equal(ledger.watermark, 7);
    assert.equal(ledger.begin(5), false);
    const restarted = new DeliveryLedger(2, [5, 1]);
    assert.deepEqual(restarted.handled, [5]);
    restarted.reset(10);
    assert.equal(restarted.begin(9), false);
    assert.equal(restarted.begin(11), true);
  });
});

describe("the backoff", () => {
  test("doubles up to its ceiling, drawn at random below it, and starts over after a success", () => {
    const backoff = new Backoff({ initialS: 0.5, maximumS: 4, draw: (_low, high) => high });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => backoff.nextDelay()),
      [0.5, 1, 2, 4, 4],
    );
    backoff.reset();
    assert.equal(backoff.nextDelay(), 0.5);
    assert.throws(() => new Backoff({ initialS: 0 }), RangeError);
  });
});

describe("pending uplinks", () => {
  test("kept in order until answered; a repeated id keeps the first envelope", async () => {
    const pending = new PendingUplinks();
    const first = pending.add({ id: "a", type: "t", payload: { n: 1 } });
    pending.add({ id: "b", type: "t" });
    const again = pending.add({ id: "a", type: "t", payload: { n: 2 } });
    assert.deepEqual(
      pending.envelopes().map((e) => [e.id, e.payload]),
      [
        ["a", { n: 1 }],
        ["b", undefined],
      ],
    );
    pending.acknowledged({ id: "a", sequence: 9, duplicate: false });
    assert.deepEqual(
      [await first, await again].map((ack) => ack.sequence),
      [9, 9],
    );
    const refused = pending.add({ id: "c", type: "t" });
    pending.refused("c", new HubRefused("no", { code: "nope" }));
    await assert.rejects(
      refused,
      (error: unknown) => error instanceof HubRefused && error.code === "nope",
    );
    assert.deepEqual(
      pending.envelopes().map((e) => e.id),
      ["b"],
    );
  });
});

describe("the state file", () => {
  test("written 0600, atomically, in the Python SDK's file name and fields", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-state-"));
    const store = StateStore.forHub("ws://Hub.Example.com:8000/lap/v0.1", "shell", dir);
    // hub/sdk/state.py: agent-<host>-<profile>-<sha256(hub\nprofile)[:10]>.json
    assert.equal(path.basename(store.path), "agent-hub-example-com-8000-shell-e9829e0007.json");
    const state = new AgentState(normaliseHubUrl("ws://Hub.Example.com:8000"), "lu_agt_secret");
    state.lastSequence = 12;
    state.resolutions["int_1"] = { interactionId: "int_1" };
    store.save(state);
    assert.equal(fs.statSync(store.path).mode & 0o777, 0o600);
    const saved = JSON.parse(fs.readFileSync(store.path, "utf8"));
    assert.equal(saved.last_sequence, 12);
    assert.equal(saved.credential, "lu_agt_secret");
    assert.deepEqual(fs.readdirSync(dir), [path.basename(store.path)], "no temporary file left");
    const loaded = store.load("http://hub.example.com:8000");
    assert.equal(loaded.credential, "lu_agt_secret");
    assert.equal(store.load("http://other:1").credential, null, "another hub's file means nothing");
  });

  test("hub addresses are normalised as the Python SDK does", () => {
    assert.equal(normaliseHubUrl("wss://Hub.example/x"), "https://hub.example");
    assert.equal(normaliseHubUrl("127.0.0.1:8000"), "http://127.0.0.1:8000");
    assert.throws(() => normaliseHubUrl("ftp://x"), TypeError);
  });
});
