// A person's answer to an interaction card, as the adapter receives it.
//
// When the card proposed an action, the answer is bound to it: `approvedAction` gives the
// fields to act on (the proposed ones, or the person's edit of them) and refuses an answer
// that approved any other action, recomputing the hash rather than taking it on trust.
import { type ActionFields, ProposedAction, actionHash } from "./actions.ts";
import { ActionMismatch, InvalidAction, NotApproved } from "./errors.ts";
import { plain } from "./exact.ts";
import type { InteractionWithdrawn } from "./protocol.generated.ts";

type Payload = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function required(payload: Payload, key: string): string {
  const value = payload[key];
  if (typeof value !== "string" || !value) {
    throw new TypeError(
      `an answer without '${key}': ${JSON.stringify(plain(payload)).slice(0, 300)}`,
    );
  }
  return value;
}

export class Resolution {
  readonly interactionId: string;
  /** The answer as the hub recorded it (`optionId`, `optionIds`, `comment`, `text`, ...). */
  readonly response: Record<string, unknown>;
  readonly respondedBy: string;
  readonly respondedAt: Date;
  readonly via: string;
  /** The card's time ran out with nothing decided: no option chosen, nothing approved. */
  readonly expired: boolean;
  /** The agent itself took the card back (`withdrawInteraction`): nobody answered it. */
  readonly withdrawn: boolean;
  /** Why it was withdrawn: "answered_in_terminal" or "no_longer_needed". */
  readonly withdrawalReason: string;
  // The decided action with its numbers as the hub wrote them, for the hash.
  private readonly exactAction: unknown;

  private constructor(fields: {
    interactionId: string;
    response?: Payload;
    respondedBy?: string;
    respondedAt: Date;
    via?: string;
    expired?: boolean;
    withdrawn?: boolean;
    withdrawalReason?: string;
  }) {
    this.interactionId = fields.interactionId;
    const response = fields.response ?? {};
    this.exactAction = response["action"];
    this.response = plain(response);
    this.respondedBy = fields.respondedBy ?? "";
    this.respondedAt = fields.respondedAt;
    this.via = fields.via ?? "";
    this.expired = fields.expired ?? false;
    this.withdrawn = fields.withdrawn ?? false;
    this.withdrawalReason = fields.withdrawalReason ?? "";
  }

  /** From an `interaction.resolved` or `interaction.expired` payload, or the record of a
   * withdrawal this agent made (`withdrawalPayload`). Numbers may be `ExactNumber`s. */
  static fromPayload(payload: Payload): Resolution {
    const interactionId = required(payload, "interactionId");
    if ("withdrawnAt" in payload) {
      return new Resolution({
        interactionId,
        respondedAt: new Date(required(payload, "withdrawnAt")),
        withdrawn: true,
        withdrawalReason: text(payload["reason"]) ?? "no_longer_needed",
      });
    }
    if ("expiredAt" in payload) {
      return new Resolution({
        interactionId,
        respondedAt: new Date(required(payload, "expiredAt")),
        expired: true,
      });
    }
    const response = payload["response"];
    if (response === null || typeof response !== "object" || Array.isArray(response)) {
      throw new TypeError(`an answer without a response: ${interactionId}`);
    }
    return new Resolution({
      interactionId,
      response: response as Payload,
      respondedBy: required(payload, "respondedBy"),
      respondedAt: new Date(required(payload, "respondedAt")),
      via: required(payload, "via"),
    });
  }

  /** What an agent keeps of a card it withdrew, read back by `fromPayload`: a handler that
   * asks the card again after a restart is given this instead of waiting forever. */
  static withdrawalPayload(withdrawal: InteractionWithdrawn, at: Date): Payload {
    return { ...withdrawal, withdrawnAt: at.toISOString() };
  }

  get optionId(): string | null {
    return text(this.response["optionId"]);
  }

  get optionIds(): string[] {
    const values = this.response["optionIds"];
    if (Array.isArray(values)) return values.map(String);
    return this.optionId ? [this.optionId] : [];
  }

  /** True only for the `approve` option of an approval or review card. */
  get approved(): boolean {
    return this.optionId === "approve";
  }

  /** A quorum's votes (actor, optionId, via, at), oldest first; [] for one answer. */
  get votes(): Record<string, unknown>[] {
    const values = this.response["votes"];
    return Array.isArray(values)
      ? values.filter((v): v is Record<string, unknown> => v !== null && typeof v === "object")
      : [];
  }

  get comment(): string | null {
    return text(this.response["comment"]);
  }

  get text(): string | null {
    return text(this.response["text"]);
  }

  /** The action decided on, `{kind, fields}`, as the person last saw or edited it. */
  get action(): { kind: string; fields: ActionFields } | null {
    const value = this.response["action"];
    return value !== null && typeof value === "object"
      ? (value as { kind: string; fields: ActionFields })
      : null;
  }

  get actionHash(): string | null {
    return text(this.response["actionHash"]);
  }

  /** The hash of the proposed action when the person edited it before deciding. */
  get editedFrom(): string | null {
    return text(this.response["editedFrom"]);
  }

  get edited(): boolean {
    return this.editedFrom !== null;
  }

  /** The fields to act on, once approved: `expected`'s, or a permitted edit of them.
   *
   * Throws `NotApproved` for any option but the `approving` ones (a card with options of
   * its own names them) and `ActionMismatch` when the decision is bound to an action that is
   * neither `expected` nor an edit its `editable` fields allow. */
  approvedAction(
    expected: ProposedAction,
    { approving = ["approve"] }: { approving?: readonly string[] } = {},
  ): ActionFields {
    if (this.optionId === null || !approving.includes(this.optionId)) {
      throw new NotApproved(this.optionId);
    }
    const decided = (this.exactAction ?? {}) as Payload;
    const kind = decided["kind"];
    const fields = decided["fields"];
    const isObject = fields !== null && typeof fields === "object" && !Array.isArray(fields);
    const hashed = this.actionHash;
    let matches = false;
    try {
      matches =
        typeof kind === "string" && isObject && actionHash(kind, fields as ActionFields) === hashed;
    } catch (error) {
      if (!(error instanceof InvalidAction)) throw error;
    }
    if (!matches) throw new ActionMismatch(expected.hash, hashed);
    const exactFields = fields as ActionFields;
    if (hashed === expected.hash) return plain(exactFields);
    if (kind !== expected.kind || this.editedFrom !== expected.hash) {
      throw new ActionMismatch(expected.hash, hashed);
    }
    const names = (o: ActionFields) => JSON.stringify(Object.keys(o).sort());
    try {
      if (
        names(exactFields) !== names(expected.fields) ||
        expected.edited(exactFields).hash !== hashed
      ) {
        throw new ActionMismatch(expected.hash, hashed);
      }
    } catch (error) {
      if (error instanceof InvalidAction) throw new ActionMismatch(expected.hash, hashed);
      throw error;
    }
    return plain(exactFields);
  }
}
