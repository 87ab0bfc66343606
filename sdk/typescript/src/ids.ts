// Ids the adapter chooses: fresh ones, and ones derived from a task and a step.
//
// A derived id is the same every time the same step of the same task runs, so a task handler
// resumed after a crash re-sends what it sent before under the same ids and the hub stores
// nothing twice (envelope ids are idempotency keys; card, child task, message and artifact
// ids are unique in the hub). The same key gives the same id as the Python SDK.
import { createHash, randomUUID } from "node:crypto";

// The hub's object ids are at most 40 characters of [A-Za-z0-9_-].
const DIGEST_LENGTH = 32;

export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}

export function derivedId(prefix: string, key: string): string {
  const digest = createHash("sha256").update(key, "utf8").digest("hex").slice(0, DIGEST_LENGTH);
  return `${prefix}_${digest}`;
}
