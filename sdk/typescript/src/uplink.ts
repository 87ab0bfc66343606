// The agent's side of the conversation: what it sends, and the answers it waits for.
//
// `Uplink` stamps envelopes, keeps each durable one in `PendingUplinks` (saved with the
// agent's state) until the hub's `ack` or `error` settles it, and sends it at once while the
// connection is live. After a reconnect it resends what was never acknowledged, in its
// original order and with its original ids, before anything new goes out: the hub stores an
// id once, so nothing is recorded twice. `ask` sends a card and waits for the person's
// answer, which may arrive long after the `ack`, across disconnects.
import type { Connection } from "./connection.ts";
import { MAX_FRAME_BYTES, envelope as stamped } from "./connection.ts";
import { AgentClosed, HubRefused, TaskCancelled } from "./errors.ts";
import { newId } from "./ids.ts";
import { type Ack, PendingUplinks } from "./pending.ts";
import type { Envelope, InteractionCard, InteractionWithdrawn } from "./protocol.generated.ts";
import { Resolution } from "./resolution.ts";
import { Deferred, Flag } from "./signals.ts";

export type KnownAnswer = (interactionId: string) => Record<string, unknown> | undefined;
export type KeepAnswer = (interactionId: string, payload: Record<string, unknown>) => void;

/** What `ask` watches of a task, so a cancel request ends the wait for an answer. */
export interface Cancellable {
  id: string;
  cancellation: AbortSignal;
  cancelReason: string;
}

export interface Route {
  envelopeId: string;
  taskId?: string | null | undefined;
  conversationId?: string | null | undefined;
}

export class Uplink {
  pending: PendingUplinks;
  /** Set once the connection is welcomed and the resend is done; until then new uplinks only
   * wait in `pending`, so none overtakes an older one still to be resent. */
  readonly live = new Flag();
  /** Aborted when the agent closes: whatever waits on a task stops waiting. */
  readonly closing = new AbortController();
  private readonly answers = new Map<string, Deferred<Resolution>[]>();
  private resending: { stop: boolean } | null = null;
  private closedFlag = false;
  private readonly connection: Connection;
  private readonly knownAnswer: KnownAnswer;
  private readonly keepAnswer: KeepAnswer;
  private readonly persist: () => void;

  constructor(
    connection: Connection,
    options: {
      stored: Envelope[];
      knownAnswer: KnownAnswer;
      keepAnswer: KeepAnswer;
      persist: () => void;
    },
  ) {
    this.connection = connection;
    this.pending = new PendingUplinks(options.stored);
    this.knownAnswer = options.knownAnswer;
    this.keepAnswer = options.keepAnswer;
    this.persist = options.persist;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  // --- sending -------------------------------------------------------------------------

  /** Send once and resend until answered; the `Ack`, or `HubRefused` if refused. */
  async send(type: string, payload: Record<string, unknown>, route: Route): Promise<Ack> {
    if (this.closedFlag) throw new AgentClosed("the agent was closed");
    const frame = envelopeFor(route, type, payload);
    refuseIfTooLarge(frame);
    const answer = this.pending.add(frame);
    this.persist();
    if (this.live.isSet()) {
      // A repeat of an id still waiting goes out as first kept, never as the new copy.
      this.connection.send(this.pending.get(route.envelopeId) ?? frame);
    }
    return answer;
  }

  /** Best effort, never resent (streaming deltas: the final message carries it all). */
  sendUnacknowledged(
    type: string,
    payload: Record<string, unknown>,
    route: Omit<Route, "envelopeId">,
  ): void {
    if (!this.live.isSet()) return;
    const frame = envelopeFor({ ...route, envelopeId: newId("evt") }, type, payload);
    refuseIfTooLarge(frame);
    this.connection.send(frame);
  }

  /** Send `card` and wait for its answer (one saved earlier counts); with `cancellation`,
   * throw `TaskCancelled` if that task is cancelled first. */
  async ask(
    card: InteractionCard & { id: string },
    route: Route,
    cancellation?: Cancellable,
  ): Promise<Resolution> {
    const interactionId = card.id;
    const answer = new Deferred<Resolution>();
    const waiting = this.answers.get(interactionId) ?? [];
    waiting.push(answer);
    this.answers.set(interactionId, waiting);
    try {
      const known = this.knownAnswer(interactionId);
      if (known !== undefined) return Resolution.fromPayload(known);
      await this.send("interaction.requested", { interaction: card }, route);
      if (cancellation === undefined) return await answer.promise;
      const signal = cancellation.cancellation;
      const stop = new Promise<"cancelled">((resolve) => {
        if (signal.aborted) resolve("cancelled");
        signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
      });
      const first = await Promise.race([answer.promise, stop]);
      if (first === "cancelled" && !answer.done) {
        throw new TaskCancelled(cancellation.id, cancellation.cancelReason);
      }
      return await answer.promise;
    } finally {
      const left = (this.answers.get(interactionId) ?? []).filter((w) => w !== answer);
      if (left.length) this.answers.set(interactionId, left);
      else this.answers.delete(interactionId);
    }
  }

  /** Take back a card this agent asked; once the hub has it, whoever waits for the card's
   * answer here is given a `Resolution` marked `withdrawn`.
   *
   * The envelope id is derived from the card, not from a step: a card is withdrawn once, so
   * a withdrawal sent again after a restart is a duplicate wherever it comes from. Throws
   * `HubRefused` when the hub refuses it: `already_decided` when a person answered first
   * (that answer then reaches the waiting caller as usual). */
  async withdraw(withdrawal: InteractionWithdrawn, taskId?: string | null): Promise<Ack> {
    const interactionId = withdrawal.interactionId;
    const ack = await this.send(
      "interaction.withdrawn",
      { ...withdrawal },
      {
        envelopeId: `${interactionId}.withdrawn`,
        taskId,
      },
    );
    const kept = Resolution.withdrawalPayload(withdrawal, new Date());
    this.keepAnswer(interactionId, kept);
    this.answered(Resolution.fromPayload(kept));
    return ack;
  }

  // --- what the hub answers ------------------------------------------------------------

  acknowledged(ack: Ack): void {
    if (this.pending.acknowledged(ack)) this.persist();
  }

  /** Settle the uplink the hub refused; false if `envelopeId` is none of ours. */
  refused(envelopeId: string, error: HubRefused): boolean {
    if (!this.pending.refused(envelopeId, error)) return false;
    this.persist();
    return true;
  }

  /** Give a card's answer (already saved) to whoever waits for it. */
  answered(resolution: Resolution): void {
    for (const waiter of this.answers.get(resolution.interactionId) ?? [])
      waiter.resolve(resolution);
  }

  // --- what the socket does ------------------------------------------------------------

  /** The hub welcomed the agent: resend, then go live. The resend runs beside the reader,
   * which goes on taking the hub's answers to it. */
  resume(): void {
    this.suspendResend();
    const run = { stop: false };
    this.resending = run;
    queueMicrotask(() => this.resend(run));
  }

  /** The socket is gone: new uplinks wait in `pending` for the next welcome. */
  suspend(): void {
    this.live.clear();
    this.suspendResend();
  }

  /** Another identity: what the old one had not yet got acknowledged means nothing. */
  forget(): void {
    this.pending = new PendingUplinks();
  }

  /** Refuse new uplinks (`AgentClosed`); callers already waiting wait on. */
  close(): void {
    this.closedFlag = true;
    this.live.clear();
    this.closing.abort();
  }

  /** Wake every caller still waiting, with `error`; the entries stay to be saved. */
  abandonWaiters(error: Error): void {
    this.pending.abandonWaiters(error);
    for (const waiting of this.answers.values()) for (const waiter of waiting) waiter.reject(error);
  }

  private suspendResend(): void {
    if (this.resending !== null) this.resending.stop = true;
    this.resending = null;
  }

  /** Send what was never acknowledged, in its original order and with its original ids,
   * before anything new; loop until nothing added meanwhile is left unsent. */
  private resend(run: { stop: boolean }): void {
    const sent = new Set<string>();
    for (;;) {
      const unsent = this.pending.envelopes().filter((e) => !sent.has(e.id));
      if (!unsent.length) break;
      for (const frame of unsent) {
        if (run.stop || !this.connection.send(frame)) return; // lost again: the next welcome resends
        sent.add(frame.id);
      }
    }
    if (!run.stop && this.connection.isOpen && !this.closedFlag) this.live.set();
  }
}

/** Refuse, before it is kept, a frame the hub would not read: past `MAX_FRAME_BYTES`
 * characters it closes the socket (1009), and resending it would close every next one. */
function refuseIfTooLarge(frame: Envelope): void {
  const size = new TextEncoder().encode(JSON.stringify(frame)).length;
  if (size > MAX_FRAME_BYTES) {
    throw new HubRefused(
      `This uplink is ${size} bytes; a frame may hold at most ${MAX_FRAME_BYTES}.`,
      {
        code: "frame_too_large",
        hint: "Send less at once: split the content or link to it as an artifact.",
      },
    );
  }
}

function envelopeFor(route: Route, type: string, payload: Record<string, unknown>): Envelope {
  const frame = stamped(route.envelopeId, type, payload);
  if (route.taskId) frame.taskId = route.taskId;
  if (route.conversationId) frame.conversationId = route.conversationId;
  return frame;
}
