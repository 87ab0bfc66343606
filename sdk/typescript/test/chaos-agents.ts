// TypeScript agents for the chaos run (tests/sdk/test_chaos.py), beside the Python ones.
//
// Each agent works its tasks as the Python workers do (accept, progress, a child task,
// finish) and answers every message with one of its own, through a relay that keeps cutting
// sockets. The test process drives this one over stdin and stdout, one JSON line each way:
// it starts with LINEUP_CHAOS_HUB (the relay), LINEUP_CHAOS_CODES (one pairing code per
// agent, comma-separated) and LINEUP_CHAOS_STATE (a directory); this prints the agents'
// ids once all are connected, then answers `status` with what each saw, and `close` by
// closing them all, a last status, and exiting.
import * as path from "node:path";
import * as readline from "node:readline";

import { Agent, Backoff, type Downlink, type Task } from "../src/index.ts";

const quiet = { info() {}, warn() {}, error() {} };

interface Seen {
  agent: Agent;
  taskStarts: Record<string, number>;
  messagesSeen: number[];
}

function worker(code: string, n: number): Seen {
  const agent = new Agent(process.env["LINEUP_CHAOS_HUB"]!, {
    pairingCode: code,
    name: `chaos-ts-${n}`,
    stateDir: path.join(process.env["LINEUP_CHAOS_STATE"]!, String(n)),
    backoff: new Backoff({ initialS: 0.02, maximumS: 0.3 }),
    logger: quiet,
  });
  const seen: Seen = { agent, taskStarts: {}, messagesSeen: [] };
  agent.onTask(async (task: Task) => {
    seen.taskStarts[task.id] = (seen.taskStarts[task.id] ?? 0) + 1;
    await task.accept();
    await task.progress(50, "half way");
    const child = await task.createChild("the part", { status: "running" });
    await child.succeed();
    await task.succeed("done");
  });
  agent.on("message.delivered", async (event: Downlink<"message.delivered">) => {
    seen.messagesSeen.push(event.sequence!);
    const message = event.payload.message;
    await agent.postMessage(String(message["conversationId"]), `echo ${String(message["id"])}`);
  });
  return seen;
}

function status(workers: Seen[]): string {
  return JSON.stringify({
    agents: workers.map(({ agent, taskStarts, messagesSeen }) => ({
      agentId: agent.agentId,
      connected: agent.connected,
      pendingUplinks: agent.pendingUplinks,
      connects: agent.connects,
      duplicatesDropped: agent.duplicatesDropped,
      taskStarts,
      messagesSeen,
    })),
  });
}

const workers = (process.env["LINEUP_CHAOS_CODES"] ?? "").split(",").filter(Boolean).map(worker);
for (const { agent } of workers) await agent.start();
console.log(status(workers));
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (line.trim() === "close") {
    await Promise.all(workers.map(({ agent }) => agent.close()));
    console.log(status(workers));
    process.exit(0); // stdin stays open: nothing else would end the process
  }
  console.log(status(workers));
}
