// What an agent is made with: its options, and the defaults the SDK fills in.
import type { Backoff } from "./backoff.ts";
import type { Logger } from "./dispatch.ts";
import type { StateStore } from "./state.ts";

export const SDK_VERSION = "lineup-sdk-typescript/0.1";

export interface AgentOptions {
  /** A credential you hold (else the stored one, else pair with `pairingCode`). */
  credential?: string | null;
  /** A one-time pairing code from the hub (Agents page, or `lineup pair`). */
  pairingCode?: string | null;
  /** The name the agent proposes when pairing. */
  name?: string | null;
  /** One state file per hub and profile: give each adapter on a machine its own. */
  profile?: string;
  /** Where the state file lives (default `$LINEUP_AGENT_HOME`, `$XDG_CONFIG_HOME/lineup`,
   * `~/.config/lineup`). */
  stateDir?: string;
  store?: StateStore;
  agentVersion?: string;
  runtime?: string;
  capabilities?: string[];
  backoff?: Backoff;
  /** Where the SDK reports what it absorbed (refusals no caller waits for, resyncs).
   * Default: warnings and errors on the console, as Python's logging shows them. */
  logger?: Logger;
}

export const WARNINGS_ON_CONSOLE: Logger = {
  info() {},
  warn: (...args: unknown[]) => console.warn(...args),
  error: (...args: unknown[]) => console.error(...args),
};

export function runtimeName(): string {
  const versions = (globalThis as { process?: { versions?: Record<string, string> } }).process
    ?.versions;
  if (versions?.["bun"]) return `bun${versions["bun"]}`;
  if ((globalThis as { Deno?: unknown }).Deno) return "deno";
  return `node${versions?.["node"]?.split(".")[0] ?? ""}`;
}
