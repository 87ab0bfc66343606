// A person's cancel reaches the task's handler wherever it waits, and the SDK confirms it.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { Agent, Backoff, TaskCancelled, type Task } from "../../src/index.ts";
import {
  HUB,
  api,
  askedCard,
  confirm,
  events,
  eventually,
  newTask,
  pairingCode,
  skip,
  taskStatus,
} from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

describe("cancellation", { skip }, () => {
  let agent: Agent;
  const stopped = new Map<string, unknown>();

  before(async () => {
    agent = new Agent(HUB, {
      pairingCode: await pairingCode(),
      name: "Canceller",
      stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-cancel-")),
      backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
      logger: quiet,
    });
    agent.onTask(async (task: Task) => {
      await task.accept();
      try {
        if (task.title.startsWith("Ask")) {
          await task.requestApproval(`${task.title}?`);
        } else {
          for (;;) await task.sleep(60);
        }
      } catch (error) {
        stopped.set(task.id, error);
        throw error;
      }
    });
    await agent.start();
    await confirm(agent.agentId!, "Canceller");
  });

  after(async () => {
    await agent?.close();
  });

  test("a cancel while waiting for a person ends the wait, closes the card and is confirmed", async () => {
    const taskId = await newTask(agent.agentId!, "Ask to deploy");
    const card = await askedCard("Ask to deploy?");
    await api("POST", `/tasks/${taskId}/cancel`, { reason: "not today" });
    const task = await taskStatus(taskId, "cancelled");
    assert.equal(task.summary, "not today");
    const error = stopped.get(taskId);
    assert.ok(error instanceof TaskCancelled && error.reason === "not today");
    assert.equal((await api("GET", `/interactions/${card.id}`)).status, "cancelled");
    const statuses = (await events())
      .filter((e) => e.type === "task.status_changed" && e.taskId === taskId)
      .map((e) => e.payload.status);
    assert.deepEqual(
      statuses.filter((s) => s === "cancelled"),
      ["cancelled"],
    );
    assert.ok(!statuses.includes("succeeded"));
  });

  test("a cancel while the handler sleeps stops it at once", async () => {
    const taskId = await newTask(agent.agentId!, "Sleep for a long time");
    await eventually(
      async () => (await api("GET", `/tasks/${taskId}`)).status === "running",
      "running",
    );
    await api("POST", `/tasks/${taskId}/cancel`, {});
    await taskStatus(taskId, "cancelled");
    assert.ok(stopped.get(taskId) instanceof TaskCancelled);
  });
});
