// Reconnect delays: exponential growth with full jitter.
//
// Full jitter (a uniform draw between zero and the exponential cap) spreads a crowd of agents
// that lost the hub at the same moment, so they do not all knock again at the same instant
// when it comes back (the "thundering herd").

export interface BackoffOptions {
  initialS?: number;
  maximumS?: number;
  factor?: number;
  /** A uniform draw in [low, high]; replaceable so a test can fix it. */
  draw?: (low: number, high: number) => number;
}

export class Backoff {
  readonly initialS: number;
  readonly maximumS: number;
  readonly factor: number;
  attempt = 0;
  private readonly draw: (low: number, high: number) => number;

  constructor({
    initialS = 0.5,
    maximumS = 30,
    factor = 2,
    draw = (low, high) => low + Math.random() * (high - low),
  }: BackoffOptions = {}) {
    if (!(initialS > 0) || maximumS < initialS || factor < 1) {
      throw new RangeError("need 0 < initialS <= maximumS and factor >= 1");
    }
    this.initialS = initialS;
    this.maximumS = maximumS;
    this.factor = factor;
    this.draw = draw;
  }

  /** The longest the next wait may be. */
  cap(): number {
    const growth = this.factor ** Math.min(this.attempt, 64); // bounded: no overflow
    return Math.min(this.maximumS, this.initialS * growth);
  }

  nextDelay(): number {
    const delay = this.draw(0, this.cap());
    this.attempt += 1;
    return delay;
  }

  /** After a connection that worked: the next failure waits briefly again. */
  reset(): void {
    this.attempt = 0;
  }
}
