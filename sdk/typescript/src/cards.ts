// Cards: what an agent asks of a person (spec §7.3: why → impact → options → details).
//
// The card's shape is the protocol's `InteractionCard` (generated from the hub's model);
// `approvalCard` builds the common one from the fields an adapter usually has at hand, as
// the Python SDK's `approval_card` does. Choice, input and review cards are plain objects of
// that type (see docs/sdk.md); the hub checks every card and refuses one that does not fit
// its type with `invalid_payload`, the message naming the rule.
import { ProposedAction } from "./actions.ts";
import type {
  ApprovalPolicy,
  InteractionCard,
  Option,
  ProposedAction as ProposedActionWire,
  Risk,
} from "./protocol.generated.ts";

/** What an approval request may say beside its title, each optional. */
export interface ApprovalFields {
  /** Why a person is needed. */
  description?: string;
  impact?: string;
  risk?: Risk | null;
  /** Default: approve / reject. */
  options?: Option[] | null;
  details?: Record<string, unknown> | null;
  /** When the card stops taking answers (its policy says what happens then). */
  expiresAt?: Date | string | null;
  /** Exactly what will be done once approved. */
  action?: ProposedAction | ProposedActionWire | null;
  /** Who must approve, and what happens while nobody does. */
  policy?: ApprovalPolicy | null;
}

const APPROVAL_FIELDS = new Set([
  "description",
  "impact",
  "risk",
  "options",
  "details",
  "expiresAt",
  "action",
  "policy",
]);

/** An approval card from the fields an adapter usually has at hand. */
export function approvalCard(title: string, fields: ApprovalFields = {}): InteractionCard {
  const unknown = Object.keys(fields).filter((key) => !APPROVAL_FIELDS.has(key));
  if (unknown.length) {
    // A mistyped name must fail loudly, not ask a person a question missing a part.
    throw new TypeError(`approvalCard() got unexpected fields: ${unknown.sort().join(", ")}`);
  }
  const card: InteractionCard = { type: "approval", title };
  if (fields.description) card.description = fields.description;
  if (fields.impact) card.impact = fields.impact;
  if (fields.risk) card.risk = fields.risk;
  if (fields.options?.length) card.options = fields.options;
  if (fields.details) card.details = fields.details;
  if (fields.expiresAt) {
    card.expiresAt =
      fields.expiresAt instanceof Date ? fields.expiresAt.toISOString() : fields.expiresAt;
  }
  if (fields.action) card.action = wireAction(fields.action);
  if (fields.policy) card.policy = fields.policy;
  return card;
}

/** The card as it goes on the wire: an action checked (`ProposedAction`) and in its wire
 * shape, an expiry given as a `Date` written as ISO 8601. */
export function wireCard(card: InteractionCard): InteractionCard {
  const out: InteractionCard = { ...card };
  if (out.action) out.action = wireAction(out.action);
  const expiresAt = out.expiresAt as unknown;
  if (expiresAt instanceof Date) out.expiresAt = expiresAt.toISOString();
  return out;
}

function wireAction(action: ProposedAction | ProposedActionWire): ProposedActionWire {
  const checked = action instanceof ProposedAction ? action : new ProposedAction(action);
  return checked.toJSON();
}
