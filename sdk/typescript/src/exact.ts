// Numbers exactly as the hub wrote them, for hashing an action the way the hub does.
//
// The hub is Python: it tells `3.0` (a float) from `3` (an int), and its action hash is over
// the canonical JSON it prints, where the two differ. JavaScript parses both to the number 3,
// so a decision bound to `{"batchSize": 3.0}` could not be checked from plain values. Frames
// that carry a decision are therefore parsed a second time with each number kept as its
// source text (`JSON.parse` hands a reviver the source since V8 11.4: Node 22, Deno; where
// it does not, numbers stay plain and only such an edge case is refused as a mismatch).

type SourceContext = { source?: string };
type Reviver = (this: unknown, key: string, value: unknown, context?: SourceContext) => unknown;
type RawJson = { rawJSON?: (text: string) => unknown };

/** A JSON number as written on the wire. */
export class ExactNumber {
  readonly source: string;

  constructor(source: string) {
    this.source = source;
  }

  valueOf(): number {
    return Number(this.source);
  }

  /** Written back as it came, where the runtime can (`JSON.rawJSON`). */
  toJSON(): unknown {
    const raw = (JSON as unknown as RawJson).rawJSON;
    return raw ? raw(this.source) : Number(this.source);
  }
}

const keepNumbers: Reviver = (_key, value, context) =>
  typeof value === "number" && typeof context?.source === "string"
    ? new ExactNumber(context.source)
    : value;

/** `JSON.parse`, with every number an `ExactNumber` (where the runtime gives the source). */
export function parseExact(text: string): unknown {
  return JSON.parse(text, keepNumbers as Parameters<typeof JSON.parse>[1]);
}

/** The same value with each `ExactNumber` made a plain number again. */
export function plain<T = unknown>(value: unknown): T {
  if (value instanceof ExactNumber) return Number(value.source) as T;
  if (Array.isArray(value)) return value.map((item) => plain(item)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = plain(item);
    return out as T;
  }
  return value as T;
}
