// Handing downlink events to the adapter's handlers: in sequence order, each once.
//
// `task.assigned` starts the `onTask` handler on its own (several tasks run side by side);
// every other event goes to its `on(type)` handlers one after another. An event is
// *finished* (and the saved position may pass it) when its handlers return, except that a
// task's `task.assigned` and any cancel request for it finish only when the task's handler
// ends: an adapter that stops mid-task gets both again next run and resumes the work.
//
// The task handler's outcome is reported for it: returning means `succeeded` (unless it
// reported an end itself), `TaskCancelled` means `cancelled`, any other error `failed` with
// the error. A cancel request for a task no handler is running here is confirmed at once.
import { AgentClosed, HubRefused, TaskCancelled } from "./errors.ts";
import type { Ack } from "./pending.ts";
import type { DownlinkPayloads } from "./protocol.generated.ts";
import { Flag, sleep } from "./signals.ts";
import { Task } from "./task.ts";
import type { Uplink } from "./uplink.ts";

/** A frame from the hub as handlers see it; `payload` is camelCase as on the wire. */
export class Downlink<K extends string = string> {
  readonly type: K;
  readonly sequence: number | null;
  readonly payload: K extends keyof DownlinkPayloads
    ? DownlinkPayloads[K]
    : Record<string, unknown>;
  /** The whole frame (with `actor`, `recordedAt`, `taskId`, ...). */
  readonly envelope: Record<string, unknown>;

  constructor(
    type: K,
    sequence: number | null,
    payload: Record<string, unknown>,
    envelope: Record<string, unknown>,
  ) {
    this.type = type;
    this.sequence = sequence;
    this.payload = payload as Downlink<K>["payload"];
    this.envelope = envelope;
  }
}

const STOP_WAIT_S = 2;

export type Handler<K extends string = string> = (event: Downlink<K>) => Promise<void> | void;
export type TaskHandler = (task: Task) => Promise<void> | void;
export type Logger = Pick<Console, "info" | "warn" | "error">;

interface Running {
  task: Task;
  // Sequences finished only when the handler ends: its task.assigned, and any cancel request
  // for it, so that a crash mid-task replays both and the work resumes.
  sequences: number[];
}

export class Dispatcher {
  taskHandler: TaskHandler | null = null;
  readonly handlers = new Map<string, Handler[]>();
  private readonly queue: Downlink[] = [];
  private readonly queued = new Flag();
  private readonly running = new Map<string, Running>();
  private readonly cancelRequests = new Map<string, string>();
  private readonly runners = new Set<Promise<void>>();
  private loop: Promise<void> | null = null;
  private stopped = false;
  private readonly uplink: Uplink;
  private readonly finished: (sequence: number) => void;
  private readonly log: Logger;

  constructor(uplink: Uplink, finished: (sequence: number) => void, log: Logger) {
    this.uplink = uplink;
    this.finished = finished;
    this.log = log;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stop dispatching; running task handlers are left without reporting (their calls to
   * the hub fail with `AgentClosed`), so their events are replayed on the next run. A
   * promise cannot be cancelled as an asyncio task can: a handler stuck in code of its own
   * is waited for a moment, then left (it can change nothing any more). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queued.set();
    const all = Promise.allSettled([this.loop, ...this.runners]);
    await Promise.race([all, sleep(STOP_WAIT_S)]);
  }

  put(event: Downlink): void {
    this.queue.push(event);
    this.queued.set();
  }

  /** Tell a running handler at once, even while other events wait in the queue. */
  cancelRequested(taskId: string, reason: string): void {
    this.cancelRequests.set(taskId, reason);
    this.running.get(taskId)?.task.cancel(reason);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const event = this.queue.shift();
      if (event === undefined) {
        this.queued.clear();
        await this.queued.wait();
        continue;
      }
      if ((await this.deliver(event)) && event.sequence !== null && !this.stopped) {
        this.finished(event.sequence);
      }
    }
  }

  /** Hand `event` to its handlers; false if its sequence finishes later. */
  private async deliver(event: Downlink): Promise<boolean> {
    let finishNow = true;
    if (event.type === "task.assigned" && this.taskHandler !== null) {
      const data = (event.payload as Record<string, unknown>)["task"];
      if (data === null || typeof data !== "object" || !(data as Record<string, unknown>)["id"]) {
        this.log.warn("ignoring task.assigned without a task", event.payload);
        return true;
      }
      const task = new Task(this.uplink, data as Record<string, unknown>);
      if (this.running.has(task.id)) return true;
      this.startTask(task, event.sequence);
      return event.sequence === null;
    }
    if (event.type === "task.cancel_requested") {
      const taskId = String((event.payload as Record<string, unknown>)["taskId"] ?? "");
      const running = this.running.get(taskId);
      if (running !== undefined && event.sequence !== null) {
        running.sequences.push(event.sequence);
        finishNow = false;
      } else if (running === undefined) {
        await this.confirmCancelled(taskId);
      }
    }
    for (const handler of [...(this.handlers.get(event.type) ?? [])]) {
      try {
        await handler(event);
      } catch (error) {
        if (error instanceof AgentClosed) return false;
        this.log.error(`the ${event.type} handler failed`, error);
      }
    }
    return finishNow;
  }

  private startTask(task: Task, sequence: number | null): void {
    const running: Running = { task, sequences: sequence === null ? [] : [sequence] };
    this.running.set(task.id, running);
    const reason = this.cancelRequests.get(task.id);
    if (reason !== undefined) task.cancel(reason);
    const runner = this.runTaskHandler(running);
    this.runners.add(runner);
    void runner.finally(() => this.runners.delete(runner));
  }

  private async runTaskHandler(running: Running): Promise<void> {
    const task = running.task;
    const handler = this.taskHandler!;
    try {
      await handler(task);
      if (!task.ended) await task.succeed();
    } catch (error) {
      if (error instanceof AgentClosed || this.stopped) return; // left to be resumed next run
      if (error instanceof TaskCancelled) {
        await this.endQuietly(task.confirmCancelled());
      } else if (error instanceof HubRefused) {
        this.log.warn(`task ${task.id}: the hub refused a step: ${error.message}`);
        if (!task.ended) await this.endQuietly(task.fail(`${error.code}: ${error.hubMessage}`));
      } else {
        this.log.error(`task ${task.id}: the handler failed`, error);
        const name = error instanceof Error ? error.name : "Error";
        const message = error instanceof Error ? error.message : String(error);
        if (!task.ended) await this.endQuietly(task.fail(`${name}: ${message}`));
      }
    }
    if (this.stopped) return;
    this.running.delete(task.id);
    this.cancelRequests.delete(task.id);
    for (const sequence of running.sequences) this.finished(sequence);
  }

  private async confirmCancelled(taskId: string): Promise<void> {
    if (!taskId) return;
    try {
      await this.uplink.send(
        "task.status_changed",
        { taskId, status: "cancelled" },
        { envelopeId: `${taskId}.cancelled`, taskId },
      );
    } catch (error) {
      if (error instanceof HubRefused)
        this.log.info(`cancel of ${taskId} not confirmed: ${error.message}`);
      else if (!(error instanceof AgentClosed)) throw error;
    }
  }

  private async endQuietly(report: Promise<Ack>): Promise<void> {
    try {
      await report;
    } catch (error) {
      // Typically the task already ended (another surface cancelled it): nothing to do.
      if (error instanceof HubRefused) this.log.info(`final report refused: ${error.message}`);
      else if (!(error instanceof AgentClosed)) throw error;
    }
  }
}
