// Replay after sockets are cut: nothing lost, nothing repeated, every event handled once
// and in order, while a person keeps giving the agent tasks and messages.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { Agent, Backoff, type Downlink, type Task } from "../../src/index.ts";
import { ChaosProxy, seeded } from "../chaos-proxy.ts";
import {
  HUB,
  api,
  confirm,
  conversation,
  events,
  eventually,
  newTask,
  pairingCode,
  skip,
} from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };
const TASKS = 12;
const MESSAGES = 12;

describe("replay after the socket is cut", { skip }, () => {
  test("every task step and every answer is stored once; every event is handled once, in order", async () => {
    const random = seeded(20261206);
    const proxy = await new ChaosProxy(Number(new URL(HUB).port), random).start();
    const agent = new Agent(proxy.url, {
      pairingCode: await pairingCode(),
      name: "Cut often",
      stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-replay-")),
      backoff: new Backoff({ initialS: 0.02, maximumS: 0.3 }),
      logger: quiet,
    });
    const starts = new Map<string, number>();
    const seen: number[] = [];
    agent.onTask(async (task: Task) => {
      starts.set(task.id, (starts.get(task.id) ?? 0) + 1);
      await task.accept();
      await task.progress(50, "half way");
      const child = await task.createChild("the part", { status: "running" });
      await child.succeed();
      await task.succeed("done");
    });
    agent.on("message.delivered", async (event: Downlink<"message.delivered">) => {
      seen.push(event.sequence!);
      await agent.postMessage(
        String(event.payload.message["conversationId"]),
        `echo ${String(event.payload.message["id"])}`,
      );
    });
    try {
      await agent.start();
      await confirm(agent.agentId!, "Cut often");
      const talk = await conversation(agent.agentId!, "Replay");
      let cutting = true;
      const killer = (async () => {
        while (cutting) {
          proxy.killOne();
          await delay(50 + random() * 150);
        }
      })();
      const tasks: string[] = [];
      for (let n = 0; n < Math.max(TASKS, MESSAGES); n++) {
        if (n < TASKS) tasks.push(await newTask(agent.agentId!, `task ${n}`, talk));
        if (n < MESSAGES) {
          await api("POST", `/conversations/${talk}/messages`, {
            content: `message ${n}`,
            targetAgentId: agent.agentId,
          });
        }
        await delay(random() * 80);
      }
      while (proxy.kills < 10) await delay(50);
      cutting = false;
      await killer;

      await eventually(
        async () => {
          const open =
            (await api("GET", "/tasks?status=running")).tasks.length +
            (await api("GET", "/tasks?status=queued")).tasks.length;
          return open === 0 && seen.length === MESSAGES && agent.pendingUplinks === 0;
        },
        "every task ended and every message answered",
        60,
      );

      const log = await events();
      const mine = log.filter((e) => e.actor === `agent:${agent.agentId}`);
      // Uplinks: each step of each task once, one answer per message, no envelope id twice.
      const steps = mine
        .filter((e) => e.type.startsWith("task."))
        .map((e) =>
          JSON.stringify([
            e.type,
            e.taskId ?? e.payload.taskId,
            e.payload.status,
            e.payload.progress,
          ]),
        );
      assert.equal(new Set(steps).size, steps.length, `a step stored twice: ${steps.join("\n")}`);
      assert.equal(new Set(mine.map((e) => e.id)).size, mine.length);
      const delivered = log.filter(
        (e) => e.type === "message.created" && e.actor.startsWith("user:"),
      );
      const answers = mine
        .filter((e) => e.type === "message.created")
        .map((e) => e.payload.content)
        .sort();
      assert.deepEqual(answers, delivered.map((e) => `echo ${e.payload.messageId}`).sort());
      // Downlinks: every message handled once, in sequence order; every task started once.
      assert.deepEqual(
        seen,
        delivered.map((e) => e.sequence),
      );
      assert.deepEqual([...starts.keys()].sort(), [...tasks].sort());
      assert.ok([...starts.values()].every((count) => count === 1));
      for (const id of tasks) assert.equal((await api("GET", `/tasks/${id}`)).status, "succeeded");
      assert.ok(
        proxy.kills >= 10 && agent.connects > 1,
        `${proxy.kills} cuts, ${agent.connects} connections`,
      );
      console.log(
        `replay: ${proxy.kills} sockets cut, ${agent.connects} connections, ${agent.duplicatesDropped} replayed duplicates dropped`,
      );
    } finally {
      await agent.close();
      await proxy.stop();
    }
  });
});
