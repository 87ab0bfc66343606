// The exact action an approval is about, its hash, and the edits a person may make to it.
//
// An agent that wants to do something specific ("run this migration on that database")
// sends it as a `ProposedAction`: a `kind` and the `fields` that say exactly what will be
// done. Every surface shows those fields as they are, and every decision carries the
// `actionHash` of what the person saw, so a decision cannot be replayed onto another action.
// Fields the agent lists as `editable` may be changed by the person before they approve
// (same type, nothing else); the decision then carries the hash of the edited action and, in
// `editedFrom`, the hash of the one that was proposed.
//
// The hash is the hub's (hub/protocol/actions.py): sha256 over the canonical JSON of
// `{"fields", "kind"}` as Python's `json.dumps(sort_keys=True, separators=(",", ":"),
// ensure_ascii=False)` writes it, UTF-8. Keys sort by code point, and numbers are written as
// Python writes the number the hub reads (`3` stays `3`, `1e-05`, `1e+16`, `2.0` from the
// hub stays `2.0`). tests/protocol/action_hash_vectors.json holds the cases both SDKs check.
import { createHash } from "node:crypto";

import { InvalidAction } from "./errors.ts";
import { ExactNumber, plain } from "./exact.ts";
import type { ProposedAction as ProposedActionWire } from "./protocol.generated.ts";

export const HASH_PREFIX = "sha256:";
export const MAX_ACTION_BYTES = 20_000;
export const MAX_FIELD_NAME_LENGTH = 100;
export const EDIT_REFUSED = "invalid_action_edit";

export type ActionFields = Record<string, unknown>;

/** The JSON the hash is taken over. Throws `InvalidAction` for what JSON cannot hold. */
export function canonicalJson(kind: string, fields: ActionFields): string {
  return canonical({ kind, fields });
}

/** `sha256:<hex>` of the action's canonical JSON; the same everywhere it is computed. */
export function actionHash(kind: string, fields: ActionFields): string {
  const digest = createHash("sha256").update(canonicalJson(kind, fields), "utf8").digest("hex");
  return HASH_PREFIX + digest;
}

/** The fingerprint people compare by eye: the first 12 hex digits. */
export function shortHash(full: string): string {
  return (full.startsWith(HASH_PREFIX) ? full.slice(HASH_PREFIX.length) : full).slice(0, 12);
}

function canonical(value: unknown): string {
  if (value === null) return "null";
  if (value instanceof ExactNumber) return pythonNumber(value.source);
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new InvalidAction("an action's numbers must be finite");
      return pythonNumber(JSON.stringify(value));
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
      const keys = Object.keys(value).sort(byCodePoint);
      const items = keys.map(
        (key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`,
      );
      return `{${items.join(",")}}`;
    }
    default:
      throw new InvalidAction("the action's fields must be plain JSON values");
  }
}

/** Python sorts keys by code point; JavaScript's default sort is by UTF-16 unit. */
function byCodePoint(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** How Python's `json.dumps` writes the number it parses from the JSON text `source`. */
function pythonNumber(source: string): string {
  if (/^-?\d+$/.test(source)) return BigInt(source).toString(); // a Python int, exact
  const value = Number(source);
  if (!Number.isFinite(value)) throw new InvalidAction("an action's numbers must be finite");
  return pythonFloatRepr(value);
}

/** Python's `repr(float)`: the shortest digits that round-trip (as JavaScript finds them),
 * in fixed notation for exponents -4 to 15 (always with a fraction: `3.0`), else in
 * scientific notation with a signed exponent of at least two digits (`1e-05`, `1.5e+16`). */
export function pythonFloatRepr(value: number): string {
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  const [mantissa, exponentText] = Math.abs(value).toExponential().split("e");
  const digits = mantissa!.replace(".", "");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const power = String(Math.abs(exponent)).padStart(2, "0");
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? "-" : "+"}${power}`;
  }
  if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
  const fraction = digits.slice(exponent + 1) || "0";
  return `${sign}${whole}.${fraction}`;
}

/** The kind of value an editable field holds, or null if it cannot be edited. */
export function valueType(value: unknown): string | null {
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number" || value instanceof ExactNumber) return "number";
  if (typeof value === "string") return "text";
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) {
    return "list of text";
  }
  return null;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  if (valueType(a) === "number" && valueType(b) === "number") return Number(a) === Number(b);
  return a === b;
}

/** What exactly will be done if the person approves. Checked as the hub checks it, so a
 * mistake is an error here rather than a refusal after the card was sent. */
export class ProposedAction {
  readonly kind: string;
  readonly fields: ActionFields;
  readonly editable: string[];

  constructor({ kind, fields = {}, editable = [] }: ProposedActionWire) {
    if (typeof kind !== "string" || kind.length < 1 || kind.length > 100) {
      throw new InvalidAction("an action's kind must be 1 to 100 characters");
    }
    for (const name of Object.keys(fields)) {
      if (name.length < 1 || name.length > MAX_FIELD_NAME_LENGTH) {
        throw new InvalidAction(`field names must be 1 to ${MAX_FIELD_NAME_LENGTH} characters`);
      }
    }
    const size = new TextEncoder().encode(canonicalJson(kind, fields)).length;
    if (size > MAX_ACTION_BYTES) {
      throw new InvalidAction(`the action must be at most ${MAX_ACTION_BYTES} bytes as JSON`);
    }
    if (editable.length > 50) throw new InvalidAction("at most 50 fields may be editable");
    if (new Set(editable).size !== editable.length) {
      throw new InvalidAction("each editable field may be listed once");
    }
    for (const name of editable) {
      if (!Object.hasOwn(fields, name)) {
        throw new InvalidAction(`editable field '${name}' is not one of the action's fields`);
      }
      if (valueType(fields[name]) === null) {
        throw new InvalidAction(
          `editable field '${name}' must hold text, a number, a boolean or a list of text`,
        );
      }
    }
    this.kind = kind;
    this.fields = { ...fields };
    this.editable = [...editable];
  }

  get hash(): string {
    return actionHash(this.kind, this.fields);
  }

  /** This action with `edits` applied, or `InvalidAction` (code `invalid_action_edit`) saying
   * why not. An edit that sets a field to the value it already has changes nothing. */
  edited(edits: ActionFields): ProposedAction {
    if (edits === null || typeof edits !== "object" || Array.isArray(edits)) {
      throw new InvalidAction(
        "'action' must be an object of field names and new values.",
        EDIT_REFUSED,
      );
    }
    const fields = { ...this.fields };
    for (const [name, value] of Object.entries(edits)) {
      if (!Object.hasOwn(this.fields, name)) {
        throw new InvalidAction(`The action has no field '${name}'.`, EDIT_REFUSED);
      }
      const current = this.fields[name];
      if (sameValue(value, current) && valueType(value) === valueType(current)) continue;
      if (!this.editable.includes(name)) {
        throw new InvalidAction(`Field '${name}' cannot be edited.`, EDIT_REFUSED);
      }
      const expected = valueType(current);
      if (valueType(value) !== expected) {
        throw new InvalidAction(`Field '${name}' must stay ${expected}.`, EDIT_REFUSED);
      }
      fields[name] = value;
    }
    try {
      return new ProposedAction({ kind: this.kind, fields, editable: this.editable });
    } catch (error) {
      throw new InvalidAction(
        `The edited action is not valid: ${(error as Error).message}`,
        EDIT_REFUSED,
      );
    }
  }

  /** What a decision records of the action: its kind and exact fields. */
  summary(): { kind: string; fields: ActionFields } {
    return { kind: this.kind, fields: plain(this.fields) };
  }

  toJSON(): ProposedActionWire {
    return { kind: this.kind, fields: this.fields, editable: this.editable };
  }
}
