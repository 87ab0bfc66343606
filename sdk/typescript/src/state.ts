// What an adapter must remember between runs, in one small JSON file per hub and profile.
//
// The file holds the agent credential (so only the first run needs a pairing code), the log
// position (`epoch` and `last_sequence`, sent back in `agent.hello`), the sequences above that
// position already handled, the answers people gave (so a restarted adapter finds a decision
// that arrived before it stopped) and the uplinks not yet acknowledged (resent with their
// original ids, which the hub deduplicates).
//
// It lives in `$LINEUP_AGENT_HOME`, else `$XDG_CONFIG_HOME/lineup`, else `~/.config/lineup`,
// is created with mode 0600 (it holds a secret) and replaced atomically, so a crash mid-write
// leaves the previous version, never half a file. The file's name and fields are the Python
// SDK's (hub/sdk/state.py): either SDK reads the other's file. One running adapter per file:
// two processes sharing one would overwrite each other's position (give each a `profile`).
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { parseExact, plain } from "./exact.ts";
import type { Envelope } from "./protocol.generated.ts";

export const STATE_VERSION = 1;
// Answers are kept for restarts; the oldest go first past this many (a long-lived adapter must
// not grow its file without bound).
export const MAX_KEPT_RESOLUTIONS = 500;

export class AgentState {
  version = STATE_VERSION;
  hub: string;
  credential: string | null = null;
  agentId: string | null = null;
  workspaceId: string | null = null;
  epoch: string | null = null;
  lastSequence = 0;
  handled: number[] = [];
  /** By interaction id: the answer's payload, numbers exact (see exact.ts). */
  resolutions: Record<string, Record<string, unknown>> = {};
  outbox: Envelope[] = [];

  constructor(hub: string, credential: string | null = null) {
    this.hub = hub;
    this.credential = credential;
  }

  /** Another agent or another log: nothing remembered about the old one applies. */
  forgetLogPosition(): void {
    this.epoch = null;
    this.lastSequence = 0;
    this.handled = [];
    this.resolutions = {};
    this.outbox = [];
  }

  keepResolution(interactionId: string, resolution: Record<string, unknown>): void {
    delete this.resolutions[interactionId]; // re-added last: the newest is kept longest
    this.resolutions[interactionId] = resolution;
    const ids = Object.keys(this.resolutions);
    for (const id of ids.slice(0, Math.max(0, ids.length - MAX_KEPT_RESOLUTIONS))) {
      delete this.resolutions[id];
    }
  }

  /** The file's JSON: the Python SDK's field names. */
  toFile(): Record<string, unknown> {
    return {
      version: this.version,
      hub: this.hub,
      credential: this.credential,
      agent_id: this.agentId,
      workspace_id: this.workspaceId,
      epoch: this.epoch,
      last_sequence: this.lastSequence,
      handled: this.handled,
      resolutions: this.resolutions,
      outbox: this.outbox,
    };
  }

  static fromFile(data: Record<string, unknown>): AgentState {
    const text = (value: unknown) => (typeof value === "string" && value ? value : null);
    const state = new AgentState(String(data["hub"]), text(data["credential"]));
    state.agentId = text(data["agent_id"]);
    state.workspaceId = text(data["workspace_id"]);
    state.epoch = text(data["epoch"]);
    state.lastSequence = Number(plain(data["last_sequence"] ?? 0)) || 0;
    state.handled = plain<unknown[]>(data["handled"] ?? []).map(Number);
    const resolutions = data["resolutions"];
    if (resolutions && typeof resolutions === "object") {
      state.resolutions = resolutions as Record<string, Record<string, unknown>>;
    }
    state.outbox = plain<Envelope[]>(data["outbox"] ?? []);
    return state;
  }
}

export function defaultDirectory(): string {
  const env = process.env;
  if (env["LINEUP_AGENT_HOME"]) return env["LINEUP_AGENT_HOME"];
  if (env["XDG_CONFIG_HOME"]) return path.join(env["XDG_CONFIG_HOME"], "lineup");
  return path.join(os.homedir(), ".config", "lineup");
}

const ADDRESS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/;

/** `http(s)://host:port` for any way of writing the hub's address (ws://, a path, ...). */
export function normaliseHubUrl(hub: string): string {
  const match = ADDRESS.exec(hub.includes("://") ? hub : `http://${hub}`);
  const given = match?.[1]?.toLowerCase() ?? "";
  const scheme = ({ ws: "http", wss: "https" } as Record<string, string>)[given] ?? given;
  const netloc = match?.[2]?.toLowerCase() ?? "";
  if ((scheme !== "http" && scheme !== "https") || !netloc) {
    throw new TypeError(`'${hub}' is not a hub address; use http://host:port or https://host`);
  }
  return `${scheme}://${netloc}`;
}

export function stateFileName(hub: string, profile: string): string {
  const netloc = ADDRESS.exec(hub)?.[2]?.toLowerCase() ?? "";
  const readable = netloc.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  const digest = createHash("sha256")
    .update(`${hub}\n${profile}`, "utf8")
    .digest("hex")
    .slice(0, 10);
  const safeProfile = profile.replace(/[^A-Za-z0-9_-]+/g, "-");
  return `agent-${readable}-${safeProfile}-${digest}.json`;
}

/** Loads and saves one `AgentState` file. */
export class StateStore {
  readonly path: string;

  constructor(filePath: string) {
    this.path = filePath;
  }

  static forHub(hub: string, profile = "default", directory?: string): StateStore {
    const normal = normaliseHubUrl(hub);
    return new StateStore(
      path.join(directory ?? defaultDirectory(), stateFileName(normal, profile)),
    );
  }

  load(hub: string): AgentState {
    const normal = normaliseHubUrl(hub);
    let text: string;
    try {
      text = fs.readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new AgentState(normal);
      throw error;
    }
    const state = AgentState.fromFile(parseExact(text) as Record<string, unknown>);
    // A file written for another hub: its credential and sequences mean nothing here.
    return state.hub === normal ? state : new AgentState(normal);
  }

  save(state: AgentState): void {
    fs.mkdirSync(path.dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = path.join(
      path.dirname(this.path),
      `.${path.basename(this.path)}.${process.pid}.tmp`,
    );
    const descriptor = fs.openSync(temporary, "w", 0o600);
    try {
      try {
        fs.writeFileSync(descriptor, JSON.stringify(state.toFile()));
        fs.fsyncSync(descriptor);
      } finally {
        fs.closeSync(descriptor);
      }
      fs.renameSync(temporary, this.path);
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      throw error;
    }
  }
}
