// Resends after a hub restart: what the agent reported while the hub was down is kept,
// sent again with its ids once the hub is back, and stored once.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { Agent, Backoff, type Task } from "../../src/index.ts";
import {
  HUB,
  confirm,
  events,
  eventually,
  newTask,
  pairingCode,
  person,
  skip,
  taskStatus,
} from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

describe("a hub restart", { skip }, () => {
  test("uplinks made while the hub is down are resent once it is back, and stored once", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-restart-"));
    const agent = new Agent(HUB, {
      pairingCode: await pairingCode(),
      name: "Restart",
      stateDir,
      backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
      logger: quiet,
    });
    let goOn: () => void = () => {};
    const hubDown = new Promise<void>((resolve) => (goOn = resolve));
    const reported: Promise<unknown>[] = [];
    agent.onTask(async (task: Task) => {
      await task.accept();
      await task.progress(10, "before the restart");
      await hubDown;
      // The hub is away: these wait in the state file, unacknowledged.
      reported.push(task.progress(60, "while the hub was down"));
      reported.push(task.postMessage("Written while the hub was down."));
      reported.push(task.addArtifact("notes.txt", "data:text/plain,kept", { summary: "kept" }));
      await Promise.all(reported);
      await task.succeed("done after the restart");
    });
    try {
      await agent.start();
      await confirm(agent.agentId!, "Restart");
      const taskId = await newTask(agent.agentId!, "Survive a restart");
      await eventually(
        async () =>
          (await events()).some(
            (e) => e.type === "task.status_changed" && e.payload.progress === 10,
          ),
        "progress 10",
      );

      await person("/hub/stop");
      await eventually(() => !agent.connected, "the agent sees the hub gone");
      goOn();
      await eventually(() => agent.pendingUplinks >= 3, "three uplinks waiting");
      const saved = JSON.parse(
        fs.readFileSync(
          path.join(
            stateDir,
            fs.readdirSync(stateDir).find((n) => n.endsWith(".json"))!,
          ),
          "utf8",
        ),
      );
      assert.ok(
        saved.outbox.length >= 3,
        "what waits is in the state file, to survive the adapter too",
      );
      await person("/hub/start");

      const done = await taskStatus(taskId, "succeeded", 60);
      assert.equal(done.progress, 100);
      assert.equal(agent.pendingUplinks, 0);
      assert.ok(agent.connects >= 2);
      const mine = (await events()).filter((e) => e.actor === `agent:${agent.agentId}`);
      const count = (match: (e: any) => boolean) => mine.filter(match).length;
      assert.equal(
        count((e) => e.type === "task.status_changed" && e.payload.progress === 60),
        1,
      );
      assert.equal(
        count((e) => e.type === "message.created"),
        1,
      );
      assert.equal(
        count((e) => e.type === "artifact.created"),
        1,
      );
      assert.equal(
        count((e) => e.type === "task.accepted"),
        1,
      );
      assert.equal(new Set(mine.map((e) => e.id)).size, mine.length);
    } finally {
      await agent.close();
    }
  });
});
