// Which downlink events are handled: exactly once each, and where to resume after a restart.
//
// The hub replays every event addressed to the agent after the `lastSequence` the agent
// sends in its hello, so the same event may arrive twice (a replay after a reconnect, a frame
// that crossed a dropped socket). Sequences are per workspace, so the agent sees a sparse
// subset of them and cannot use gaps to detect loss; it relies on the hub's in-order replay.
//
// The position sent back is the *watermark*: every event at or below it was handled to the
// end. An event whose handler still runs (a task waiting hours for a person) holds the
// watermark below it, so a restart replays it and the adapter resumes that work; events above
// the watermark that did finish are remembered in `handled` and skipped when replayed.

export class DeliveryLedger {
  watermark: number;
  private handledSet: Set<number>;
  private readonly inFlightSet = new Set<number>();
  private highestSeen: number;

  constructor(watermark = 0, handled: Iterable<number> = []) {
    this.watermark = watermark;
    this.handledSet = new Set([...handled].filter((s) => s > watermark));
    this.highestSeen = Math.max(watermark, ...this.handledSet);
  }

  /** True if `sequence` is new and must be handled; false for a repeat. */
  begin(sequence: number): boolean {
    if (
      sequence <= this.watermark ||
      this.handledSet.has(sequence) ||
      this.inFlightSet.has(sequence)
    ) {
      return false;
    }
    this.inFlightSet.add(sequence);
    this.highestSeen = Math.max(this.highestSeen, sequence);
    return true;
  }

  /** The event was handled to the end. A handler interrupted by closing the adapter is
   * never finished, so its event stays below the watermark and is replayed next run. */
  finish(sequence: number): void {
    if (!this.inFlightSet.delete(sequence)) return;
    this.handledSet.add(sequence);
    this.advance();
  }

  /** After `system.resync_required`: continue from `watermark`, forget the rest. */
  reset(watermark: number): void {
    this.watermark = watermark;
    this.handledSet.clear();
    this.highestSeen = Math.max(watermark, ...this.inFlightSet);
  }

  private advance(): void {
    const ceiling = this.inFlightSet.size ? Math.min(...this.inFlightSet) - 1 : this.highestSeen;
    this.watermark = Math.max(this.watermark, ceiling);
    this.handledSet = new Set([...this.handledSet].filter((s) => s > this.watermark));
  }

  /** Handled sequences above the watermark (to persist). */
  get handled(): number[] {
    return [...this.handledSet].sort((a, b) => a - b);
  }

  get inFlight(): number[] {
    return [...this.inFlightSet].sort((a, b) => a - b);
  }
}
