// The agent: one identity on one hub, its handlers, and the calls an adapter makes.
//
// `Agent` owns the durable state (`StateStore`), what it sends and the answers it waits for
// (`Uplink`), which downlink events were handled (`DeliveryLedger`) and the socket
// (`Connection`). `await agent.run()` serves until closed; `await Agent.connect(...)` (or
// `await agent.start()`) returns once welcomed and leaves the connection running.
//
// Downlink events are taken in sequence order, each once (`DeliveryLedger`). Two kinds are
// absorbed as soon as they arrive, so a handler waiting for them is never stuck behind
// another: `interaction.resolved` and `interaction.expired` (the answer, or the card's expiry
// with nothing decided, is saved, then given to whoever waits for it) and
// `task.cancel_requested` (the task's handler is told). Then the `Dispatcher` hands every
// event to the adapter's handlers, in order. This is the Python SDK's design (hub/sdk/agent.py)
// and its behaviour, call for call.
import { type ApprovalFields, approvalCard, wireCard } from "./cards.ts";
import { Connection, type Frame, type Session } from "./connection.ts";
import { Dispatcher, Downlink, type Handler, type Logger, type TaskHandler } from "./dispatch.ts";
import { AgentClosed, type AuthenticationFailed, HubRefused, NotPaired } from "./errors.ts";
import { parseExact } from "./exact.ts";
import { newId } from "./ids.ts";
import { DeliveryLedger } from "./ledger.ts";
import type { Ack } from "./pending.ts";
import type { AgentPaired, AgentWelcome, InteractionCard } from "./protocol.generated.ts";
import { Resolution } from "./resolution.ts";
import { Deferred } from "./signals.ts";
import { type AgentOptions, SDK_VERSION, WARNINGS_ON_CONSOLE, runtimeName } from "./options.ts";
import { AgentState, StateStore, normaliseHubUrl } from "./state.ts";
import { Task, type MessageAttachment, type WithdrawalReason } from "./task.ts";
import { Uplink } from "./uplink.ts";

export class Agent {
  readonly hub: string;
  readonly store: StateStore;
  state: AgentState;
  name: string | null;
  readonly agentVersion: string;
  readonly runtime: string;
  readonly capabilities: string[];
  heartbeatIntervalS: number | null = null;
  /** Downlink repeats skipped (a replay overlapping a live send). */
  duplicatesDropped = 0;
  private pairingCode: string | null;
  private ledger: DeliveryLedger;
  private readonly connection: Connection;
  private readonly uplink: Uplink;
  private readonly dispatcher: Dispatcher;
  private readonly log: Logger;
  private welcomeEpoch: string | null = null;
  private running: Promise<void> | null = null;
  private runEnded: Deferred<void> | null = null;

  constructor(hub: string, options: AgentOptions = {}) {
    this.hub = normaliseHubUrl(hub);
    this.store =
      options.store ?? StateStore.forHub(this.hub, options.profile ?? "default", options.stateDir);
    this.state = this.store.load(this.hub);
    if (options.credential && options.credential !== this.state.credential) {
      this.state = new AgentState(this.hub, options.credential);
    }
    this.name = options.name ?? null;
    this.agentVersion = options.agentVersion ?? SDK_VERSION;
    this.runtime = options.runtime ?? runtimeName();
    this.capabilities = [...(options.capabilities ?? [])];
    this.log = options.logger ?? WARNINGS_ON_CONSOLE;
    this.pairingCode = options.pairingCode ?? null;
    this.ledger = new DeliveryLedger(this.state.lastSequence, this.state.handled);
    this.connection = new Connection(this.hub, this.session(), { backoff: options.backoff });
    this.uplink = new Uplink(this.connection, {
      stored: this.state.outbox,
      knownAnswer: (id) => this.state.resolutions[id],
      keepAnswer: (id, payload) => this.keepAnswer(id, payload),
      persist: () => this.persist(),
    });
    this.dispatcher = new Dispatcher(this.uplink, (sequence) => this.finished(sequence), this.log);
  }

  // --- identity and status -------------------------------------------------------------

  get agentId(): string | null {
    return this.state.agentId;
  }

  get workspaceId(): string | null {
    return this.state.workspaceId;
  }

  get connected(): boolean {
    return this.uplink.live.isSet();
  }

  /** Closed, or stopped serving (the hub refused its identity). */
  get closed(): boolean {
    return this.uplink.closed || this.runEnded?.done === true;
  }

  get lastSequence(): number {
    return this.ledger.watermark;
  }

  /** How many times a socket reached `agent.welcome` (1 + reconnects). */
  get connects(): number {
    return this.connection.connects;
  }

  get pendingUplinks(): number {
    return this.uplink.pending.size;
  }

  waitConnected(): Promise<void> {
    return this.uplink.live.wait();
  }

  // --- handlers ------------------------------------------------------------------------

  /** `handler(task)` runs for each task assigned to this agent. Returning means the task
   * succeeded (unless it already reported an end), throwing means it failed,
   * `TaskCancelled` means it stopped on request. */
  onTask(handler: TaskHandler): TaskHandler {
    this.dispatcher.taskHandler = handler;
    return handler;
  }

  /** `handler(downlink)` for each downlink event of type `type`, one after another. */
  on<K extends string>(type: K, handler: Handler<K>): Handler<K> {
    const list = this.dispatcher.handlers.get(type) ?? [];
    list.push(handler as Handler);
    this.dispatcher.handlers.set(type, list);
    return handler;
  }

  // --- lifecycle -----------------------------------------------------------------------

  /** Create, connect and return the agent (the connection keeps running). */
  static async connect(hub: string, options: AgentOptions = {}): Promise<Agent> {
    return new Agent(hub, options).start();
  }

  /** Connect; resolve once the hub has welcomed the agent. Rejects with
   * `AuthenticationFailed` if the hub refuses the pairing code or credential, `NotPaired` if
   * there is neither. */
  async start(): Promise<this> {
    if (this.uplink.closed) throw new AgentClosed("the agent was closed");
    if (this.running === null) {
      if (!this.state.credential && !this.pairingCode) {
        throw new NotPaired(
          `No credential for ${this.hub} in ${this.store.path} and no pairing code: ` +
            "create a pairing code in the hub (or `lineup pair`) and pass it.",
        );
      }
      const ended = new Deferred<void>();
      this.runEnded = ended;
      this.running = this.connection.run().then(
        () => ended.resolve(),
        (error: unknown) => ended.reject(error),
      );
      this.dispatcher.start();
    }
    const ready = this.uplink.live.wait().then(() => "ready" as const);
    const outcome = await Promise.race([
      ready,
      this.runEnded!.promise.then(
        () => "ended" as const,
        (e: unknown) => e,
      ),
    ]);
    if (outcome === "ready") return this;
    await this.close();
    throw outcome === "ended"
      ? new AgentClosed("the connection ended before the hub welcomed the agent")
      : outcome;
  }

  /** Connect and serve until `close` (or a refused identity, which rejects). */
  async run(): Promise<void> {
    await this.start();
    try {
      await this.runEnded!.promise;
    } finally {
      await this.close();
    }
  }

  /** Disconnect. Task handlers still running are stopped without reporting anything: their
   * events stay below the saved position, so the next run resumes them. */
  async close(): Promise<void> {
    if (this.uplink.closed) return;
    this.uplink.close();
    this.connection.close();
    const closedError = new AgentClosed("the agent was closed");
    this.uplink.abandonWaiters(closedError);
    await this.dispatcher.stop();
    await this.running?.catch(() => undefined);
    this.persist();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- uplinks -------------------------------------------------------------------------

  /** Any uplink, kept and resent until acknowledged; rejects with `HubRefused` if refused. */
  send(
    type: string,
    payload: Record<string, unknown>,
    {
      taskId,
      conversationId,
      envelopeId,
    }: { taskId?: string | null; conversationId?: string | null; envelopeId?: string } = {},
  ): Promise<Ack> {
    return this.uplink.send(type, payload, {
      envelopeId: envelopeId ?? newId("evt"),
      taskId,
      conversationId,
    });
  }

  /** A message outside a task; returns its id. */
  async postMessage(
    conversationId: string,
    content: string,
    { taskId, attachments }: { taskId?: string | null; attachments?: MessageAttachment[] } = {},
  ): Promise<string> {
    const messageId = newId("msg");
    const payload: Record<string, unknown> = { messageId, conversationId, content };
    if (attachments?.length) payload["attachments"] = attachments;
    await this.send("message.create", payload, { taskId, conversationId });
    return messageId;
  }

  /** An artifact outside a task (or of a task this adapter knows by id); returns its id. */
  async addArtifact(
    name: string,
    url: string,
    {
      taskId,
      mimeType,
      summary,
    }: { taskId?: string | null; mimeType?: string | null; summary?: string | null } = {},
  ): Promise<string> {
    const artifactId = newId("art");
    const payload: Record<string, unknown> = { artifactId, name, url };
    if (taskId) payload["taskId"] = taskId;
    if (mimeType) payload["mimeType"] = mimeType;
    if (summary) payload["summary"] = summary;
    await this.send("artifact.created", payload, { taskId });
    return artifactId;
  }

  /** Ask a person and wait for the answer (through disconnects). Inside a task handler
   * prefer `task.requestInteraction`, which also survives restarts; a caller that keeps its
   * own idempotency keys passes the card's `id` and `envelopeId`. */
  requestInteraction(
    card: InteractionCard,
    {
      taskId,
      conversationId,
      envelopeId,
    }: { taskId?: string | null; conversationId?: string | null; envelopeId?: string } = {},
  ): Promise<Resolution> {
    const asked = { ...wireCard(card), id: card.id ?? newId("int") };
    return this.uplink.ask(asked, {
      envelopeId: envelopeId ?? newId("evt"),
      taskId,
      conversationId,
    });
  }

  /** An approval card (`approvalCard`'s fields) asked outside a task handler. */
  requestApproval(
    title: string,
    fields: ApprovalFields & { taskId?: string | null } = {},
  ): Promise<Resolution> {
    const { taskId, ...rest } = fields;
    return this.requestInteraction(approvalCard(title, rest), { taskId });
  }

  /** Take back a card this agent asked that nobody answered yet (see
   * `Task.withdrawInteraction`). */
  withdrawInteraction(
    interactionId: string,
    { reason = "no_longer_needed", note = "" }: { reason?: WithdrawalReason; note?: string } = {},
  ): Promise<Ack> {
    return this.uplink.withdraw({ interactionId, reason, note });
  }

  /** A `Task` helper for a task this adapter knows of by other means (`{id: ...}`). */
  task(data: Record<string, unknown>): Task {
    return new Task(this.uplink, data);
  }

  /** Open a task of this agent's own (`queued`; `accept()` it to start), for work no person
   * assigned, so that its progress, cards and artifacts are tracked like any. */
  async createTask(
    title: string,
    {
      description = "",
      conversationId,
    }: { description?: string; conversationId?: string | null } = {},
  ): Promise<Task> {
    const data: Record<string, unknown> = { taskId: newId("task"), title };
    if (description) data["description"] = description;
    if (conversationId) data["conversationId"] = conversationId;
    await this.send("task.created", data, { conversationId });
    return new Task(this.uplink, { ...data, id: data["taskId"], status: "queued" });
  }

  // --- the session the connection serves -----------------------------------------------

  private session(): Session {
    return {
      credential: () => this.state.credential,
      helloPayload: () => this.helloPayload(),
      paired: (paired) => this.paired(paired),
      welcomed: (welcome) => this.welcomed(welcome),
      received: (frame, raw) => this.received(frame, raw),
      disconnected: () => this.uplink.suspend(),
      credentialRefused: (error) => this.credentialRefused(error),
    };
  }

  private credentialRefused(error: AuthenticationFailed): boolean {
    if (this.state.credential && this.pairingCode) {
      this.log.warn(`stored credential refused (${error.message}); pairing with the code given`);
      this.state = new AgentState(this.hub);
      this.ledger = new DeliveryLedger();
      this.uplink.forget();
      this.persist();
      return true;
    }
    return false;
  }

  private helloPayload(): Record<string, unknown> {
    const pairing = !this.state.credential;
    const hello: Record<string, unknown> = {
      agentVersion: this.agentVersion,
      runtime: this.runtime,
      capabilities: this.capabilities,
      lastSequence: this.ledger.watermark,
    };
    if (this.state.epoch) hello["epoch"] = this.state.epoch;
    if (pairing && this.pairingCode) hello["pairingCode"] = this.pairingCode;
    const name = pairing ? this.name || "agent" : this.name;
    if (name) hello["name"] = name;
    return hello;
  }

  private paired(paired: AgentPaired): void {
    this.state = new AgentState(this.hub, paired.credential);
    this.state.agentId = paired.agentId;
    this.state.workspaceId = paired.workspaceId;
    this.ledger = new DeliveryLedger();
    this.pairingCode = null; // used up: a later refusal must not try it again
    this.persist();
    this.log.info(`paired as agent ${paired.agentId}; credential saved in ${this.store.path}`);
  }

  private welcomed(welcome: AgentWelcome): void {
    if (this.state.agentId && this.state.agentId !== welcome.agentId) {
      this.state.forgetLogPosition();
      this.ledger = new DeliveryLedger();
      this.uplink.forget();
    }
    this.state.agentId = welcome.agentId;
    this.state.workspaceId = welcome.workspaceId;
    this.welcomeEpoch = welcome.epoch;
    if (this.state.epoch === null) {
      this.state.epoch = welcome.epoch;
    } else if (this.state.epoch !== welcome.epoch) {
      this.log.warn(
        `the hub's log is another one (epoch ${welcome.epoch}, was ${this.state.epoch}): expecting a resync`,
      );
    }
    this.heartbeatIntervalS = welcome.heartbeatIntervalS;
    this.persist();
    this.uplink.resume();
  }

  private received(frame: Frame, raw: string): void {
    const type = String(frame.type ?? "");
    const given = frame.payload;
    const payload = (
      given !== null && typeof given === "object" && !Array.isArray(given) ? given : {}
    ) as Record<string, unknown>;
    if (type === "ack") {
      if (typeof payload["id"] !== "string") {
        this.log.warn("ignoring a malformed ack", raw.slice(0, 300));
        return;
      }
      this.uplink.acknowledged(payload as unknown as Ack);
      return;
    }
    if (type === "error") {
      const error = HubRefused.fromFrame(payload);
      const envelopeId = payload["id"];
      if (!(typeof envelopeId === "string" && this.uplink.refused(envelopeId, error))) {
        this.log.warn(`the hub reported: ${error.message}`);
      }
      return;
    }
    if (type === "warning") {
      this.log.warn(`the hub warns: ${String(payload["message"] ?? JSON.stringify(payload))}`);
      return;
    }
    if (type === "system.resync_required") this.resync(payload);
    let sequence: number | null = typeof frame["sequence"] === "number" ? frame["sequence"] : null;
    if (sequence !== null && type !== "system.resync_required") {
      if (!this.ledger.begin(sequence)) {
        this.duplicatesDropped += 1;
        return;
      }
      this.absorb(type, payload, raw);
    } else {
      sequence = null;
    }
    this.dispatcher.put(new Downlink(type, sequence, payload, frame));
  }

  private resync(payload: Record<string, unknown>): void {
    const lastSequence = payload["lastSequence"];
    if (typeof lastSequence !== "number") {
      this.log.warn("ignoring a malformed resync frame", payload);
      return;
    }
    this.log.warn(
      `the hub cannot replay from ${this.ledger.watermark} (${String(payload["reason"])}): continuing from ${lastSequence}`,
    );
    this.ledger.reset(lastSequence);
    this.state.epoch = this.welcomeEpoch ?? this.state.epoch;
    this.persist();
  }

  private absorb(type: string, payload: Record<string, unknown>, raw: string): void {
    if (type === "interaction.resolved" || type === "interaction.expired") {
      // Parsed again with the numbers as written, for the hash of a decided action.
      const exact = ((parseExact(raw) as Frame).payload ?? payload) as Record<string, unknown>;
      let resolution: Resolution;
      try {
        resolution = Resolution.fromPayload(exact);
      } catch (error) {
        this.log.warn(`ignoring a malformed resolution: ${(error as Error).message}`);
        return;
      }
      this.keepAnswer(resolution.interactionId, exact);
      this.uplink.answered(resolution);
    } else if (type === "task.cancel_requested") {
      this.dispatcher.cancelRequested(
        String(payload["taskId"] ?? ""),
        String(payload["reason"] ?? ""),
      );
    }
  }

  private keepAnswer(interactionId: string, payload: Record<string, unknown>): void {
    this.state.keepResolution(interactionId, payload);
    this.persist();
  }

  private finished(sequence: number): void {
    this.ledger.finish(sequence);
    this.persist();
  }

  private persist(): void {
    this.state.lastSequence = this.ledger.watermark;
    this.state.handled = this.ledger.handled;
    this.state.outbox = this.uplink.pending.envelopes();
    this.store.save(this.state);
  }
}
