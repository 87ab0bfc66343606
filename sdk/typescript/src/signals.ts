// The few waiting primitives the SDK needs, as asyncio gives them to the Python SDK.

/** A promise with its resolve and reject at hand. Its rejection never goes unhandled: a
 * waiter abandoned with an error (the agent closing) must not crash the process. */
export class Deferred<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  reject!: (error: unknown) => void;
  done = false;

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = (value) => {
        if (!this.done) {
          this.done = true;
          resolve(value);
        }
      };
      this.reject = (error) => {
        if (!this.done) {
          this.done = true;
          reject(error);
        }
      };
    });
    this.promise.catch(() => undefined);
  }
}

/** A flag that can be waited for (asyncio's `Event`). */
export class Flag {
  private waiting: Deferred<void> | null = null;
  private value = false;

  isSet(): boolean {
    return this.value;
  }

  set(): void {
    this.value = true;
    this.waiting?.resolve();
    this.waiting = null;
  }

  clear(): void {
    this.value = false;
  }

  wait(): Promise<void> {
    if (this.value) return Promise.resolve();
    this.waiting ??= new Deferred<void>();
    return this.waiting.promise;
  }
}

/** Resolves after `seconds`, or at once when `signal` aborts (without throwing). */
export function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, seconds * 1000));
    signal?.addEventListener("abort", done, { once: true });
  });
}
