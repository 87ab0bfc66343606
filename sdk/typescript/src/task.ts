// One task assigned to the agent, and the helpers that report on it.
//
// A handler registered with `agent.onTask` gets a `Task` and works through it: accept,
// report progress, create child tasks, ask a person, stream messages, add artifacts, finish.
// Each helper waits for the hub's `ack` (through disconnects: the uplink is resent with its
// original id) and throws `HubRefused` if the hub refused it.
//
// Every uplink a task sends gets an id derived from the task and the step's position in the
// handler (the n-th call). A handler that runs again after the adapter crashed makes the same
// calls in the same order, so it re-sends the same ids and the hub, which stores an id once,
// records nothing twice: the work resumes where it stopped instead of repeating steps.
//
// Cancellation is cooperative: when a person asks to stop, the next helper that waits for a
// person, `checkpoint` or `sleep` throws `TaskCancelled`; if it escapes the handler the SDK
// confirms `cancelled` to the hub. `task.cancellation` is an `AbortSignal` for other waits.
import { type ApprovalFields, approvalCard, wireCard } from "./cards.ts";
import { AgentClosed, TaskCancelled } from "./errors.ts";
import { derivedId } from "./ids.ts";
import type { Ack } from "./pending.ts";
import type { InteractionCard, InteractionWithdrawn } from "./protocol.generated.ts";
import type { Resolution } from "./resolution.ts";
import { sleep } from "./signals.ts";
import type { Uplink } from "./uplink.ts";

export const TERMINAL = new Set(["succeeded", "failed", "cancelled"]);

export type TaskStatus =
  "queued" | "running" | "waiting_for_human" | "succeeded" | "failed" | "cancelled";
export type WithdrawalReason = NonNullable<InteractionWithdrawn["reason"]>;
export type MessageAttachment = { name: string; url: string; mimeType?: string };

function optionalText(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

export class Task {
  readonly uplink: Uplink;
  /** The whole `task` payload the hub sent. */
  readonly data: Record<string, unknown>;
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly conversationId: string | null;
  readonly parentId: string | null;
  status: string;
  /** The last progress reported. */
  percent: number | null;
  summary: string;
  error: string;
  /** The card a person is being asked right now, and the answers given so far. */
  pending: InteractionCard | null = null;
  readonly answers: [InteractionCard, Resolution][] = [];
  ended = false;
  cancelReason = "";
  private readonly cancelController = new AbortController();
  private steps = 0;

  constructor(uplink: Uplink, data: Record<string, unknown>) {
    this.uplink = uplink;
    this.data = { ...data };
    this.id = String(data["id"]);
    this.title = String(data["title"] ?? "");
    this.description = String(data["description"] ?? "");
    this.conversationId = optionalText(data["conversationId"]);
    this.parentId = optionalText(data["parentTaskId"]) ?? optionalText(data["parentId"]);
    this.status = String(data["status"] ?? "queued");
    this.percent = typeof data["progress"] === "number" ? data["progress"] : null;
    this.summary = String(data["summary"] ?? "");
    this.error = String(data["error"] ?? "");
  }

  /** Aborted when a person asks to stop this task (its `reason` is the `TaskCancelled`). */
  get cancellation(): AbortSignal {
    return this.cancelController.signal;
  }

  get cancelRequested(): boolean {
    return this.cancelController.signal.aborted;
  }

  // --- the hub's view of the task ------------------------------------------------------

  async accept(): Promise<Ack> {
    const ack = await this.sendStep("task.accepted", { taskId: this.id });
    this.status = "running";
    return ack;
  }

  /** Report 0–100 % done and a one-line summary; the task stays `running`. */
  progress(percent: number, summary?: string | null): Promise<Ack> {
    return this.report("running", { progress: percent, summary });
  }

  async report(
    status: TaskStatus,
    {
      progress,
      summary,
      error,
    }: { progress?: number | null; summary?: string | null; error?: string | null } = {},
  ): Promise<Ack> {
    const payload: Record<string, unknown> = { taskId: this.id, status };
    if (progress !== undefined && progress !== null) payload["progress"] = progress;
    if (summary !== undefined && summary !== null) payload["summary"] = summary;
    if (error !== undefined && error !== null) payload["error"] = error;
    const ack = await this.sendStep("task.status_changed", payload);
    this.status = status;
    this.ended = TERMINAL.has(status);
    if (progress !== undefined && progress !== null) this.percent = progress;
    if (summary !== undefined && summary !== null) this.summary = summary;
    if (error !== undefined && error !== null) this.error = error;
    return ack;
  }

  succeed(summary?: string | null): Promise<Ack> {
    return this.report("succeeded", { progress: 100, summary });
  }

  fail(error: string, summary?: string | null): Promise<Ack> {
    return this.report("failed", { error, summary });
  }

  confirmCancelled(summary?: string | null): Promise<Ack> {
    return this.report("cancelled", { summary: summary || this.cancelReason || null });
  }

  /** A sub-task shown under this one; report on it through the returned `Task`. */
  async createChild(
    title: string,
    { description = "", status = "queued" }: { description?: string; status?: TaskStatus } = {},
  ): Promise<Task> {
    const key = this.nextStep();
    const childId = derivedId("task", key);
    await this.sendStep(
      "task.child_created",
      { taskId: childId, parentTaskId: this.id, title, description, status },
      key,
    );
    return new Task(this.uplink, {
      id: childId,
      title,
      description,
      status,
      conversationId: this.conversationId,
      parentTaskId: this.id,
    });
  }

  // --- asking a person -----------------------------------------------------------------

  /** Ask a person and wait for the answer, however long it takes and through disconnects
   * and restarts; throws `TaskCancelled` if the task is cancelled first. */
  async requestInteraction(card: InteractionCard): Promise<Resolution> {
    const key = this.nextStep();
    const asked = { ...wireCard(card), id: card.id ?? derivedId("int", key) };
    const statusBefore = this.status;
    this.pending = asked;
    this.status = "waiting_for_human"; // as the hub moves it on the request
    let answer: Resolution;
    try {
      answer = await this.uplink.ask(
        asked,
        { envelopeId: key, taskId: this.id, conversationId: this.conversationId },
        this,
      );
    } catch (error) {
      this.pending = null;
      this.status = statusBefore;
      throw error;
    }
    this.pending = null;
    this.status = "running";
    this.answers.push([asked, answer]);
    return answer;
  }

  /** An approval card (why → impact → options → details); `.approved` on the answer.
   * `policy`: who must approve (a quorum, named approvers) and what happens while nobody
   * does; the answer arrives once, when the policy has decided. */
  requestApproval(title: string, fields: ApprovalFields = {}): Promise<Resolution> {
    return this.requestInteraction(approvalCard(title, fields));
  }

  /** Take back a card of this task that nobody answered yet: the question was answered
   * elsewhere (`reason: "answered_in_terminal"`) or is no longer needed. A
   * `requestInteraction` still waiting for it returns a `Resolution` marked `withdrawn`.
   * Throws `HubRefused` (`already_decided` when a person answered first: that answer is
   * what `requestInteraction` gets). The card's id is `task.pending.id` while it waits. */
  withdrawInteraction(
    interactionId: string,
    { reason = "no_longer_needed", note = "" }: { reason?: WithdrawalReason; note?: string } = {},
  ): Promise<Ack> {
    return this.uplink.withdraw({ interactionId, reason, note }, this.id);
  }

  // --- messages and artifacts ----------------------------------------------------------

  /** A message in the task's conversation (the hub opens one for a task that has none, so
   * the task's result has a place on its page); returns its id. */
  async postMessage(
    content: string,
    { attachments }: { attachments?: MessageAttachment[] } = {},
  ): Promise<string> {
    const key = this.nextStep();
    const messageId = derivedId("msg", key);
    const payload: Record<string, unknown> = { messageId, content };
    if (this.conversationId) payload["conversationId"] = this.conversationId;
    if (attachments?.length) payload["attachments"] = attachments;
    await this.sendStep("message.create", payload, key);
    return messageId;
  }

  /** A message written piece by piece: `write` each chunk, then `end()` stores it whole. */
  streamMessage(): MessageStream {
    const key = this.nextStep();
    return new MessageStream(this, derivedId("msg", key), key);
  }

  /** Stream every chunk of `chunks` as it comes, then store the whole text; its id. */
  async streamMessageFrom(chunks: AsyncIterable<string> | Iterable<string>): Promise<string> {
    const stream = this.streamMessage();
    for await (const chunk of chunks) stream.write(chunk);
    await stream.end();
    return stream.messageId;
  }

  async addArtifact(
    name: string,
    url: string,
    { mimeType, summary }: { mimeType?: string | null; summary?: string | null } = {},
  ): Promise<string> {
    const key = this.nextStep();
    const artifactId = derivedId("art", key);
    const payload: Record<string, unknown> = { artifactId, taskId: this.id, name, url };
    if (mimeType) payload["mimeType"] = mimeType;
    if (summary) payload["summary"] = summary;
    await this.sendStep("artifact.created", payload, key);
    return artifactId;
  }

  // --- cancellation --------------------------------------------------------------------

  /** Throw `TaskCancelled` if a person asked to stop this task. */
  checkpoint(): void {
    if (this.cancelRequested) throw new TaskCancelled(this.id, this.cancelReason);
    if (this.uplink.closed) throw new AgentClosed("the agent was closed");
  }

  /** Wait `seconds`, but stop at once (`TaskCancelled`) if the task is cancelled meanwhile. */
  async sleep(seconds: number): Promise<void> {
    this.checkpoint();
    await sleep(seconds, AbortSignal.any([this.cancellation, this.uplink.closing.signal]));
    this.checkpoint();
  }

  /** The dispatcher's: a person asked to stop. */
  cancel(reason: string): void {
    if (this.cancelRequested) return;
    this.cancelReason = reason;
    this.cancelController.abort(new TaskCancelled(this.id, reason));
  }

  // --- plumbing ------------------------------------------------------------------------

  private nextStep(): string {
    this.steps += 1;
    return `${this.id}.${this.steps}`;
  }

  private sendStep(type: string, payload: Record<string, unknown>, key?: string): Promise<Ack> {
    return this.uplink.send(type, payload, {
      envelopeId: key ?? this.nextStep(),
      taskId: this.id,
      conversationId: this.conversationId,
    });
  }
}

/** A message written piece by piece: each `write` is shown live (`message.delta`), the
 * whole text is stored once by `end()` (`message.create`). Deltas are neither stored nor
 * resent after a disconnect; the final message is. */
export class MessageStream {
  readonly task: Task;
  readonly messageId: string;
  private readonly key: string;
  private readonly parts: string[] = [];

  constructor(task: Task, messageId: string, key: string) {
    this.task = task;
    this.messageId = messageId;
    this.key = key;
  }

  get text(): string {
    return this.parts.join("");
  }

  write(chunk: string): void {
    if (!chunk) return;
    this.parts.push(chunk);
    const payload: Record<string, unknown> = { messageId: this.messageId, delta: chunk };
    if (this.task.conversationId) payload["conversationId"] = this.task.conversationId;
    this.task.uplink.sendUnacknowledged("message.delta", payload, {
      taskId: this.task.id,
      conversationId: this.task.conversationId,
    });
  }

  /** Store the whole text (`message.create` under the streamed id). */
  async end(): Promise<Ack> {
    const payload: Record<string, unknown> = { messageId: this.messageId, content: this.text };
    if (this.task.conversationId) payload["conversationId"] = this.task.conversationId;
    return this.task.uplink.send("message.create", payload, {
      envelopeId: this.key,
      taskId: this.task.id,
      conversationId: this.task.conversationId,
    });
  }
}
