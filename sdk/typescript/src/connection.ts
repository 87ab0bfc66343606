// The socket to the hub: connect, say hello, keep it alive, and connect again when it drops.
//
// `Connection.run` loops until closed: open `/lap/v0.1` (with the credential as a bearer
// token, or without one to pair), send `agent.hello`, pass `agent.paired` and
// `agent.welcome` and every later frame to the `Session`, send heartbeats every
// `heartbeatIntervalS` the hub asked for, and after any loss wait a jittered, growing delay
// and start over. It stops for good only when closed or when the hub refuses the agent's
// identity (`AuthenticationFailed`): a refused credential does not get better by retrying.
//
// The standard WebSocket API (Node 22, Deno, Bun) hides the HTTP answer to a refused
// upgrade, so after a socket that never opened the connection asks the hub why with a plain
// GET of the same path and credential: 401 or 403 with the error body is a refusal, anything
// else a reason to try again. It cannot send WebSocket pings either, so a socket on which the
// hub said nothing for three heartbeat intervals, and at least 20 s (it acknowledges every
// heartbeat), is taken for dead, as the hub takes a silent agent.
import { Backoff } from "./backoff.ts";
import { AuthenticationFailed, HubRefused } from "./errors.ts";
import { newId } from "./ids.ts";
import type { AgentPaired, AgentWelcome, Envelope } from "./protocol.generated.ts";
import { Deferred, sleep } from "./signals.ts";

export const ENDPOINT_PATH = "/lap/v0.1";
export const PROTOCOL_VERSION = "0.1";
export const MAX_FRAME_BYTES = 1_000_000;

// Close codes and HTTP statuses after which reconnecting cannot help: the identity is not
// welcome, or another adapter now holds this agent's connection (4409, `connection_replaced`:
// two processes with one credential would take turns forever).
export const AUTH_CLOSE_CODES = new Set([4401, 4403, 4409]);
const AUTH_HTTP_STATUSES = new Set([401, 403]);
// Errors on the hello that are worth retrying; any other means the hello itself is wrong.
const RETRYABLE_HELLO_ERRORS = new Set(["unavailable", "internal_error"]);
// Silence for this many heartbeat intervals, and at least as long as the Python SDK's ping
// timeout, means the socket is gone (a stalled hub is not a dead socket).
const SILENT_INTERVALS = 3;
const SILENT_AT_LEAST_S = 20;

export type Frame = Record<string, unknown> & { type?: unknown; payload?: unknown };

/** What the connection asks of, and tells, the agent it serves. */
export interface Session {
  credential(): string | null;
  helloPayload(): Record<string, unknown>;
  paired(paired: AgentPaired): void;
  welcomed(welcome: AgentWelcome): void;
  /** Every other frame, with its text (for the numbers of a decision, see exact.ts). */
  received(frame: Frame, raw: string): void;
  disconnected(): void;
  /** True if the session can try another way in (a pairing code) after this refusal. */
  credentialRefused(error: AuthenticationFailed): boolean;
}

/** `ws(s)://host/lap/v0.1` for a hub at `http(s)://host`. */
export function endpointUrl(hub: string): string {
  if (hub.startsWith("https://")) return `wss://${hub.slice("https://".length)}${ENDPOINT_PATH}`;
  return `ws://${hub.replace(/^http:\/\//, "")}${ENDPOINT_PATH}`;
}

/** The hub asked us to come back later, or the socket was lost. */
class Retry extends Error {}

export function envelope(id: string, type: string, payload: Record<string, unknown>): Envelope {
  return { id, type, version: PROTOCOL_VERSION, occurredAt: new Date().toISOString(), payload };
}

type WebSocketWithHeaders = new (
  url: string,
  init?: { headers?: Record<string, string> },
) => WebSocket;

export class Connection {
  readonly url: string;
  readonly probeUrl: string;
  readonly backoff: Backoff;
  readonly openTimeoutS: number;
  /** Sockets that reached `agent.welcome` (1 + reconnects), for diagnostics and tests. */
  connects = 0;
  private socket: WebSocket | null = null;
  private current: WebSocket | null = null;
  private readonly closing = new AbortController();
  private readonly session: Session;

  constructor(
    hub: string,
    session: Session,
    { backoff, openTimeoutS = 10 }: { backoff?: Backoff | undefined; openTimeoutS?: number } = {},
  ) {
    this.session = session;
    this.url = endpointUrl(hub);
    this.probeUrl = `${hub}${ENDPOINT_PATH}`;
    this.backoff = backoff ?? new Backoff();
    this.openTimeoutS = openTimeoutS;
  }

  get isOpen(): boolean {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  /** Stay connected until `close`; throws `AuthenticationFailed` if refused. */
  async run(): Promise<void> {
    while (!this.closing.signal.aborted) {
      try {
        await this.connectOnce();
      } catch (error) {
        if (error instanceof AuthenticationFailed) {
          if (!this.session.credentialRefused(error)) throw error;
          continue; // the session has another way in: try it at once
        }
        if (!(error instanceof Retry)) throw error;
      } finally {
        this.socket = null;
        this.session.disconnected();
      }
      if (this.closing.signal.aborted) break;
      await sleep(this.backoff.nextDelay(), this.closing.signal);
    }
  }

  close(): void {
    this.closing.abort();
    try {
      this.current?.close(1000);
    } catch {
      // already closed
    }
  }

  /** Write one frame; false when there is no open socket (the caller keeps it). */
  send(frame: Envelope): boolean {
    const socket = this.socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) return false;
    try {
      socket.send(JSON.stringify(frame));
    } catch {
      return false;
    }
    return true;
  }

  private async connectOnce(): Promise<void> {
    const credential = this.session.credential();
    const headers: Record<string, string> = credential
      ? { Authorization: `Bearer ${credential}` }
      : {};
    const Socket = WebSocket as unknown as WebSocketWithHeaders;
    const socket = new Socket(this.url, { headers });
    this.current = socket;
    const ended = new Deferred<void>();
    const helloId = newId("evt");
    let opened = false;
    let lastHeard = Date.now();
    // The hub explains a refusal in an `error` frame just before it closes the socket with
    // the code alone: kept, so the refusal carries its message and next step.
    let explained: HubRefused | null = null;
    let heartbeat: ReturnType<typeof setInterval> | null = null;
    const openTimer = setTimeout(() => {
      if (!opened) ended.reject(new Retry("the hub did not open the socket in time"));
    }, this.openTimeoutS * 1000);
    const onAbort = () => ended.resolve();
    this.closing.signal.addEventListener("abort", onAbort, { once: true });

    socket.addEventListener("open", () => {
      opened = true;
      clearTimeout(openTimer);
      socket.send(JSON.stringify(envelope(helloId, "agent.hello", this.session.helloPayload())));
    });
    socket.addEventListener("message", (event: MessageEvent) => {
      lastHeard = Date.now();
      if (ended.done) return;
      const raw = typeof event.data === "string" ? event.data : "";
      const frame = parse(raw);
      if (frame === null) return;
      try {
        const payload = (frame.payload ?? {}) as Record<string, unknown>;
        if (frame.type === "agent.paired") {
          this.session.paired(payload as unknown as AgentPaired);
        } else if (frame.type === "agent.welcome") {
          const welcome = payload as unknown as AgentWelcome;
          this.socket = socket;
          this.session.welcomed(welcome);
          this.connects += 1;
          this.backoff.reset();
          heartbeat ??= this.beat(
            socket,
            Number(welcome.heartbeatIntervalS) || 25,
            () => lastHeard,
            ended,
          );
        } else if (frame.type === "error" && payload["id"] === helloId) {
          ended.reject(helloError(payload));
        } else {
          if (frame.type === "error" && payload["id"] == null)
            explained = HubRefused.fromFrame(payload);
          this.session.received(frame, raw);
        }
      } catch (error) {
        ended.reject(error);
      }
    });
    let lost = false;
    const end = (code: number, reason: string) => {
      if (lost) return;
      lost = true;
      if (AUTH_CLOSE_CODES.has(code)) {
        const refusal = refusalFromReason(code, reason);
        ended.reject(
          explained?.code === refusal.code
            ? new AuthenticationFailed(explained.hubMessage, {
                code: explained.code,
                hint: explained.hint,
              })
            : refusal,
        );
      } else if (opened) {
        ended.reject(new Retry(`the socket closed (${code})`));
      } else {
        // Never opened: the upgrade was refused or the hub is away. Ask which.
        this.probe(credential).then(
          () => ended.reject(new Retry("no connection to the hub")),
          (error: unknown) => ended.reject(error),
        );
      }
    };
    socket.addEventListener("close", (event: CloseEvent) => end(event.code, event.reason));
    // A failed upgrade may end with `error` alone (Node's WebSocket fires no `close` then).
    socket.addEventListener("error", () => {
      if (!opened) end(1006, "");
    });
    try {
      await ended.promise;
    } finally {
      clearTimeout(openTimer);
      if (heartbeat !== null) clearInterval(heartbeat);
      this.closing.signal.removeEventListener("abort", onAbort);
      this.socket = null;
      try {
        socket.close(1000);
      } catch {
        // already closed
      }
    }
  }

  private beat(
    socket: WebSocket,
    intervalS: number,
    lastHeard: () => number,
    ended: Deferred<void>,
  ): ReturnType<typeof setInterval> {
    return setInterval(() => {
      if (
        Date.now() - lastHeard() >
        Math.max(SILENT_INTERVALS * intervalS, SILENT_AT_LEAST_S) * 1000
      ) {
        ended.reject(new Retry("the hub said nothing for too long"));
        return;
      }
      if (socket.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify(envelope(newId("hb"), "agent.heartbeat", {})));
      }
    }, intervalS * 1000);
  }

  /** Resolves when the hub would take this credential (or cannot be asked); throws
   * `AuthenticationFailed` with the hub's reasons when it refuses it. */
  private async probe(credential: string | null): Promise<void> {
    if (!credential) return;
    let response: Response;
    try {
      response = await fetch(this.probeUrl, {
        headers: { Authorization: `Bearer ${credential}` },
        signal: AbortSignal.timeout(this.openTimeoutS * 1000),
      });
    } catch {
      return;
    }
    const body = await response.text().catch(() => "");
    if (AUTH_HTTP_STATUSES.has(response.status)) throw refusalFromBody(body);
  }
}

function parse(raw: string): Frame | null {
  try {
    const frame: unknown = JSON.parse(raw);
    if (frame !== null && typeof frame === "object" && !Array.isArray(frame)) return frame as Frame;
  } catch {
    // not JSON: ignored, as the Python SDK does
  }
  return null;
}

function helloError(payload: Record<string, unknown>): Error {
  const error = HubRefused.fromFrame(payload);
  if (RETRYABLE_HELLO_ERRORS.has(error.code)) return new Retry(error.message);
  return new AuthenticationFailed(error.hubMessage, { code: error.code, hint: error.hint });
}

function refusalFromBody(body: string): AuthenticationFailed {
  try {
    const data = JSON.parse(body) as Record<string, unknown>;
    const error = (data["error"] ?? data) as Record<string, unknown>;
    return new AuthenticationFailed(
      String(error["message"] || "The hub refused the agent's credential."),
      {
        code: String(error["code"] || "unauthorized"),
        hint: String(error["hint"] || "Pair the agent again with a new pairing code."),
      },
    );
  } catch {
    return new AuthenticationFailed("The hub refused the agent's credential.", {
      code: "unauthorized",
      hint: "Pair the agent again with a new pairing code.",
    });
  }
}

function refusalFromReason(closeCode: number, reason: string): AuthenticationFailed {
  let data: unknown = null;
  try {
    data = JSON.parse(reason);
  } catch {
    data = null;
  }
  if (data !== null && typeof data === "object" && "code" in data) {
    const fields = data as Record<string, unknown>;
    return new AuthenticationFailed(String(fields["message"] || reason), {
      code: String(fields["code"]),
      hint: String(fields["hint"] || ""),
    });
  }
  const code = ({ 4403: "forbidden", 4409: "connection_replaced" } as Record<number, string>)[
    closeCode
  ];
  return new AuthenticationFailed(reason || `The hub closed the connection (code ${closeCode}).`, {
    code: code ?? "unauthorized",
    hint: "Pair the agent again with a new pairing code.",
  });
}
