// An adapter stopped mid-task resumes it on its next run: the task is handed to the handler
// again, the steps it had reported are re-sent under the same ids (the hub stores them once),
// and the decision a person gave while it was away is waiting for it.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { Agent, Backoff, type Task } from "../../src/index.ts";
import {
  HUB,
  askedCard,
  confirm,
  events,
  newTask,
  pairingCode,
  respond,
  skip,
  taskStatus,
} from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

function adapter(stateDir: string, runs: string[], options: { pairingCode?: string } = {}): Agent {
  const agent = new Agent(HUB, {
    ...options,
    name: "Resumer",
    stateDir,
    backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
    logger: quiet,
  });
  agent.onTask(async (task: Task) => {
    runs.push(task.id);
    await task.accept();
    await task.progress(40, "prepared");
    const child = await task.createChild("Back up", { status: "running" });
    await child.succeed();
    const answer = await task.requestApproval("Go ahead with the upgrade?");
    assert.equal(answer.approved, true);
    await task.succeed("upgraded");
  });
  return agent;
}

describe("resuming after a restart", { skip }, () => {
  test("a task waiting for a person when the adapter stopped ends once, with no step twice", async () => {
    const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-resume-"));
    const runs: string[] = [];
    const first = adapter(stateDir, runs, { pairingCode: await pairingCode() });
    await first.start();
    await confirm(first.agentId!, "Resumer");
    const taskId = await newTask(first.agentId!, "Upgrade the dependencies");
    const card = await askedCard("Go ahead with the upgrade?");
    await first.close(); // mid-task: nothing more is reported
    await respond(card.id, { optionId: "approve" }); // decided while the adapter is away

    const second = adapter(stateDir, runs);
    try {
      await second.start();
      await taskStatus(taskId, "succeeded");
    } finally {
      await second.close();
    }
    assert.deepEqual(runs, [taskId, taskId], "the handler ran again from the top");
    const mine = (await events()).filter((e) => e.actor === `agent:${second.agentId}`);
    const types = mine.map((e) => e.type);
    assert.equal(types.filter((t) => t === "task.accepted").length, 1);
    assert.equal(types.filter((t) => t === "task.child_created").length, 1);
    assert.equal(types.filter((t) => t === "interaction.requested").length, 1);
    assert.equal(
      mine.filter((e) => e.type === "task.status_changed" && e.payload.progress === 40).length,
      1,
    );
    assert.equal(
      mine.filter((e) => e.payload.status === "succeeded" && e.taskId === taskId).length,
      1,
    );
  });
});
