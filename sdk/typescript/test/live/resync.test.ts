// Sequences mean something only within one log: an agent whose saved position names another
// log (a hub restored from an older backup) is told to resync, takes the hub's position, and
// skips nothing silently; it goes on working from there.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { Agent, Backoff, type Downlink } from "../../src/index.ts";
import { HUB, api, confirm, conversation, eventually, pairingCode, skip } from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

describe("a position in another log", { skip }, () => {
  test("is resynced from the hub's end of the log, and the agent works on from there", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-resync-"));
    const options = {
      stateDir,
      backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
      logger: quiet,
    };
    const first = new Agent(HUB, { ...options, pairingCode: await pairingCode(), name: "Resync" });
    await first.start();
    await confirm(first.agentId!, "Resync");
    const talk = await conversation(first.agentId!, "Resync");
    const epoch = first.state.epoch;
    await first.close();

    // The saved position now names a log the hub does not have.
    const file = path.join(
      stateDir,
      fs.readdirSync(stateDir).find((n) => n.endsWith(".json"))!,
    );
    const saved = JSON.parse(fs.readFileSync(file, "utf8"));
    fs.writeFileSync(
      file,
      JSON.stringify({ ...saved, epoch: "evt_restored_from_a_backup", last_sequence: 3 }),
    );

    const seen: Downlink[] = [];
    const second = new Agent(HUB, options);
    second.on("system.resync_required", (event) => void seen.push(event));
    second.on("message.delivered", (event) => void seen.push(event));
    try {
      await second.start();
      const resync = await eventually(
        () => seen.find((e) => e.type === "system.resync_required"),
        "a resync",
      );
      assert.equal((resync.payload as Record<string, unknown>)["reason"], "epoch_changed");
      assert.equal(second.state.epoch, epoch, "the hub's epoch is taken");
      assert.equal(
        second.lastSequence,
        (resync.payload as Record<string, unknown>)["lastSequence"],
      );
      const onDisk = JSON.parse(fs.readFileSync(file, "utf8"));
      assert.equal(onDisk.epoch, epoch);

      await api("POST", `/conversations/${talk}/messages`, {
        content: "after the resync",
        targetAgentId: second.agentId,
      });
      const delivered = await eventually(
        () => seen.find((e) => e.type === "message.delivered"),
        "the next message",
      );
      assert.equal((delivered.payload as any).message.content, "after the resync");
    } finally {
      await second.close();
    }
  });
});
