// Uplinks sent but not yet acknowledged, kept until the hub answers.
//
// Each entry is the exact envelope first sent, so a resend after a reconnect carries the
// original `id` and `occurredAt`: the hub stores an id once and answers a repeat with `ack`
// marked `duplicate`. Entries stay in the order they were added, which is the order they are
// resent in.
import type { HubRefused } from "./errors.ts";
import type { Ack, Envelope } from "./protocol.generated.ts";
import { Deferred } from "./signals.ts";

/** An ack as the hub sends it: the uplink's id, its sequence, and the ids the hub chose. */
export type { Ack };

export class PendingUplinks {
  private readonly entries = new Map<string, Envelope>();
  private readonly waiters = new Map<string, Deferred<Ack>[]>();

  constructor(stored: Iterable<Envelope> = []) {
    for (const envelope of stored) this.entries.set(String(envelope.id), envelope);
  }

  /** Keep `envelope` until answered; the promise gets the `ack` or a `HubRefused`.
   *
   * Adding an id that is already waiting keeps the first envelope: a repeat must not replace
   * what the hub may already have stored under that id. */
  add(envelope: Envelope): Promise<Ack> {
    const id = String(envelope.id);
    if (!this.entries.has(id)) this.entries.set(id, envelope);
    const answer = new Deferred<Ack>();
    const waiting = this.waiters.get(id) ?? [];
    waiting.push(answer);
    this.waiters.set(id, waiting);
    return answer.promise;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every entry, in the order it was added (the order it is resent in). */
  envelopes(): Envelope[] {
    return [...this.entries.values()];
  }

  get(id: string): Envelope | undefined {
    return this.entries.get(id);
  }

  /** Settle the entry `ack` answers; false if it answers nothing we wait for. */
  acknowledged(ack: Ack): boolean {
    if (!this.entries.delete(ack.id)) return false;
    for (const waiter of this.waiters.get(ack.id) ?? []) waiter.resolve(ack);
    this.waiters.delete(ack.id);
    return true;
  }

  refused(id: string, error: HubRefused): boolean {
    if (!this.entries.delete(id)) return false;
    for (const waiter of this.waiters.get(id) ?? []) waiter.reject(error);
    this.waiters.delete(id);
    return true;
  }

  /** The adapter is closing: wake every caller; the entries stay to be persisted. */
  abandonWaiters(error: Error): void {
    for (const waiting of this.waiters.values()) for (const waiter of waiting) waiter.reject(error);
    this.waiters.clear();
  }
}
