// What can go wrong for an adapter, as errors a program can switch on.
//
// The hub answers a refused uplink with an `error` frame carrying a stable `code`, a
// `message` and a `hint` (the next step for a person); `HubRefused` carries the three so a
// caller can show them or branch on the code. `AuthenticationFailed` is the one the SDK does
// not retry: a wrong pairing code or a revoked credential will not get better by reconnecting.

/** Root of every error the SDK throws on purpose. */
export class SdkError extends Error {
  override name = "SdkError";
}

/** The hub refused something; `code` is stable, `hint` says what to do next. */
export class HubRefused extends SdkError {
  override name = "HubRefused";
  readonly code: string;
  readonly hint: string;
  /** Everything else the refusal said (`details`, ...). */
  readonly details: Record<string, unknown>;

  constructor(
    message: string,
    {
      code = "error",
      hint = "",
      details = {},
    }: { code?: string; hint?: string; details?: Record<string, unknown> } = {},
  ) {
    super(`[${code}] ${message}${hint ? ` (next: ${hint})` : ""}`);
    this.code = code;
    this.hint = hint;
    this.details = details;
    this.hubMessage = message;
  }

  /** The hub's own words, without the code and hint `message` adds. */
  readonly hubMessage: string;

  static fromFrame(payload: Record<string, unknown>): HubRefused {
    const { id: _id, code, message, hint, ...details } = payload;
    return new this(String(message || "the hub refused the frame"), {
      code: String(code || "error"),
      hint: String(hint || ""),
      details,
    });
  }
}

/** The pairing code or the credential was refused; reconnecting will not help. */
export class AuthenticationFailed extends HubRefused {
  override name = "AuthenticationFailed";
}

/** There is neither a stored credential nor a pairing code to get one. */
export class NotPaired extends SdkError {
  override name = "NotPaired";
}

/** A person asked to stop this task; the SDK confirms `cancelled` when it leaves the handler. */
export class TaskCancelled extends SdkError {
  override name = "TaskCancelled";
  readonly taskId: string;
  readonly reason: string;

  constructor(taskId: string, reason = "") {
    super(`task ${taskId} was cancelled${reason ? `: ${reason}` : ""}`);
    this.taskId = taskId;
    this.reason = reason;
  }
}

/** The agent was closed while a call still waited for the hub. */
export class AgentClosed extends SdkError {
  override name = "AgentClosed";
}

/** The person did not approve, so there is no action to take. */
export class NotApproved extends SdkError {
  override name = "NotApproved";
  readonly optionId: string | null;

  constructor(optionId: string | null) {
    super(`the decision was ${JSON.stringify(optionId)}, not an approval: do not act`);
    this.optionId = optionId;
  }
}

/** The decision is bound to another action than the one about to be taken: acting anyway
 * would do something no person approved, so ask again with the action as it stands now. */
export class ActionMismatch extends SdkError {
  override name = "ActionMismatch";
  readonly expected: string;
  readonly decided: string | null;

  constructor(expected: string, decided: string | null) {
    super(
      `the decision approved action ${decided || "(none)"}, not ${expected}: ` +
        "request approval for this action again",
    );
    this.expected = expected;
    this.decided = decided;
  }
}

/** A proposed action that the protocol would refuse (the message says why). */
export class InvalidAction extends SdkError {
  override name = "InvalidAction";
  /** `invalid_action_edit` for an edit the action does not allow. */
  readonly code: string;

  constructor(message: string, code = "invalid_action") {
    super(message);
    this.code = code;
  }
}
