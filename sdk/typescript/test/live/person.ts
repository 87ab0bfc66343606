// The person's hands on a running hub, for the live suites: the JSON API (the web's own
// surface for an answer), the hub's log through the events API, and what the test process
// that started the hub does for us (restart it, act as the person's Telegram account).
//
// `tests/sdk/typescript/test_live.py` starts the hub and sets LINEUP_TEST_HUB,
// LINEUP_TEST_TOKEN, LINEUP_TEST_WORKSPACE and LINEUP_TEST_PERSON; without them the live
// suites are skipped (that test fails on any skip).
import { setTimeout as delay } from "node:timers/promises";

export const HUB = process.env["LINEUP_TEST_HUB"] ?? "";
const TOKEN = process.env["LINEUP_TEST_TOKEN"] ?? "";
const WORKSPACE = process.env["LINEUP_TEST_WORKSPACE"] ?? "";
const PERSON = process.env["LINEUP_TEST_PERSON"] ?? "";

/** Why a live suite cannot run here, or false. */
export const skip =
  HUB && TOKEN && WORKSPACE && PERSON ? false : "no hub: run through tests/sdk/typescript";

export type Json = Record<string, any>;

export class Refused extends Error {
  readonly status: number;
  readonly body: Json;

  constructor(status: number, body: Json, what: string) {
    super(`${what} → ${status}: ${JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
  }
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  auth = true,
): Promise<any> {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (auth) headers["Authorization"] = `Bearer ${TOKEN}`;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : {};
  if (response.status >= 400) throw new Refused(response.status, data, `${method} ${path}`);
  return data;
}

/** The workspace's JSON API, as the person (bearer token). */
export function api(method: string, path: string, body?: unknown): Promise<any> {
  return call(HUB, method, `/api/v1/workspaces/${WORKSPACE}${path}`, body);
}

/** Ask the test process that runs the hub (and the Telegram peer) to do something. */
export function person(path: string, body: unknown = {}): Promise<any> {
  return call(PERSON, "POST", path, body, false);
}

export async function pairingCode(): Promise<string> {
  return (await api("POST", "/pairing-codes")).code;
}

export async function confirm(agentId: string, name: string): Promise<void> {
  await api("POST", `/agents/${agentId}/confirm`, { name });
}

export async function conversation(agentId: string, title = "TypeScript agent"): Promise<string> {
  return (await api("POST", "/conversations", { title, agentIds: [agentId] })).id;
}

export async function newTask(
  agentId: string,
  title: string,
  conversationId?: string,
): Promise<string> {
  const body: Json = { title, description: "", targetAgentId: agentId };
  if (conversationId) body["conversationId"] = conversationId;
  return (await api("POST", "/tasks", body)).id;
}

/** Every event of the workspace's log, in order. */
export async function events(): Promise<Json[]> {
  const all: Json[] = [];
  let after = 0;
  for (;;) {
    const page = await api("GET", `/events?after=${after}&limit=500`);
    all.push(...page.events);
    if (page.events.length < 500) return all;
    after = page.events.at(-1).sequence;
  }
}

/** Wait (bounded) for `check` to give something truthy, and return it. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  what: string,
  withinS = 30,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + withinS * 1000;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`not within ${withinS} s: ${what}`);
    await delay(50);
  }
}

/** The card titled `title` once an agent asked it (as its `interaction.requested` holds it). */
export async function askedCard(title: string): Promise<Json> {
  return eventually(async () => {
    const asked = (await events()).find(
      (e) => e.type === "interaction.requested" && e.payload.interaction?.title === title,
    );
    return asked?.payload.interaction ?? null;
  }, `the card "${title}"`);
}

/** Answer a card on the web's JSON API as the person. */
export function respond(interactionId: string, answer: Json): Promise<Json> {
  return api("POST", `/interactions/${interactionId}/respond`, answer);
}

export async function taskStatus(taskId: string, status: string, withinS = 30): Promise<Json> {
  return eventually(
    async () => {
      const task = await api("GET", `/tasks/${taskId}`);
      return task.status === status ? task : null;
    },
    `task ${taskId} ${status}`,
    withinS,
  );
}
