"""Interaction cards (spec §7.3, §10.4) and the answers a person may give to them.

A card is what an agent asks; ``validate_response`` is the one place that decides whether an
answer fits a card. Every surface (web, email, Telegram, notebook, MCP) goes through it via
the core, so a surface can never record an answer the card did not offer.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal, TypedDict, Unpack

from pydantic import Field, StringConstraints, model_validator

from hub.protocol.actions import ActionEditError, ProposedAction
from hub.protocol.actions import action_hash as action_hash  # the contract's import path
from hub.protocol.base import WireModel

OptionId = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[\w.:-]+$")]
MAX_COMMENT_LENGTH = 2000
MAX_CHOICE_OPTIONS = 5  # spec §7.3: 2–5 options


class InteractionType(StrEnum):
    APPROVAL = "approval"
    CHOICE = "choice"
    INPUT = "input"
    REVIEW = "review"


class Risk(StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


# A card that states no risk is treated as medium wherever risk decides something (which
# cards may approve themselves on expiry, who hears of a card when only high risk counts).
UNSTATED_RISK = Risk.MEDIUM


def risk_of(value: Risk | str | None) -> Risk:
    """The risk a card counts as: the one it states, else ``UNSTATED_RISK``."""
    if value is None:
        return UNSTATED_RISK
    try:
        return Risk(value)
    except ValueError:
        return UNSTATED_RISK


class Option(WireModel):
    id: OptionId
    label: str = Field(min_length=1, max_length=200)
    style: Literal["primary", "danger", "default", "secondary"] | None = None
    description: str | None = Field(None, max_length=1000)
    recommended: bool = False


class InputFormat(StrEnum):
    TEXT = "text"
    URL = "url"
    EMAIL = "email"
    NUMBER = "number"
    PATTERN = "pattern"


class InputSpec(WireModel):
    format: InputFormat = InputFormat.TEXT
    pattern: str | None = Field(None, max_length=500)
    min_length: int = Field(0, ge=0)
    max_length: int = Field(4000, ge=1, le=100_000)
    placeholder: str | None = Field(None, max_length=200)
    multiline: bool = False
    sensitive: bool = False  # never shown in notifications (spec §11)

    @model_validator(mode="after")
    def _pattern_compiles(self) -> InputSpec:
        if self.format is InputFormat.PATTERN:
            if not self.pattern:
                raise ValueError("format 'pattern' needs a 'pattern'")
            try:
                re.compile(self.pattern)
            except re.error as error:
                raise ValueError(f"pattern does not compile: {error}") from None
        return self


_DEFAULT_OPTIONS: dict[InteractionType, list[Option]] = {
    InteractionType.APPROVAL: [
        Option(id="approve", label="Approve", style="primary"),
        Option(id="reject", label="Reject", style="danger"),
    ],
    InteractionType.REVIEW: [
        Option(id="approve", label="Approve", style="primary"),
        Option(id="request_changes", label="Request changes", style="default"),
    ],
}


MAX_APPROVERS = 50
MAX_POLICY_DELAY_S = 30 * 24 * 3600  # a month: longer waits are a mistake, not a policy


class ApprovalPolicy(WireModel):
    """Who must approve a card and what the hub does while it waits.

    ``any``: the first answer of an allowed person decides. ``quorum``: ``required``
    approvals decide; the first rejection decides at once. ``approvers`` names who may
    answer (member emails or user ids; empty means every member who may answer).
    ``on_expiry`` is what the hub decides when ``expiresAt`` passes; ``None`` means "deny"
    for a high-risk card and "expire" (nothing decided) otherwise.
    """

    mode: Literal["any", "quorum"] = "any"
    approvers: list[Annotated[str, StringConstraints(min_length=1, max_length=320)]] = Field(
        default_factory=list, max_length=MAX_APPROVERS
    )
    required: int = Field(1, ge=1, le=MAX_APPROVERS)
    remind_after_s: int | None = Field(None, ge=1, le=MAX_POLICY_DELAY_S)
    escalate_after_s: int | None = Field(None, ge=1, le=MAX_POLICY_DELAY_S)
    escalate_to: list[Annotated[str, StringConstraints(min_length=1, max_length=320)]] = Field(
        default_factory=list, max_length=MAX_APPROVERS
    )
    on_expiry: Literal["deny", "approve", "expire"] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ApprovalPolicy:
        if len(set(self.approvers)) != len(self.approvers):
            raise ValueError("each approver may be named once")
        if self.mode == "any" and self.required != 1:
            raise ValueError("'required' applies to a quorum; set mode to 'quorum'")
        if self.approvers and self.required > len(self.approvers):
            raise ValueError("a quorum cannot need more approvals than there are approvers")
        if self.escalate_after_s is not None and not self.escalate_to:
            raise ValueError("'escalateAfterS' needs 'escalateTo': whom to escalate to")
        if self.escalate_to and self.escalate_after_s is None:
            raise ValueError("'escalateTo' needs 'escalateAfterS': when to escalate")
        return self

    def expiry_outcome(self, risk: Risk | None) -> str:
        """What expiry decides: the explicit choice, else the safe default for the risk."""
        if self.on_expiry is not None:
            return self.on_expiry
        return "deny" if risk is Risk.HIGH else "expire"


class InteractionCard(WireModel):
    """What an agent asks of a person. Structure of §7.3: why → impact → options → details."""

    id: str | None = Field(None, min_length=1, max_length=40, pattern=r"^[\w-]+$")
    type: InteractionType
    title: str = Field(min_length=1, max_length=300)
    description: str = Field("", max_length=10_000)  # why you are needed
    impact: str = Field("", max_length=10_000)
    risk: Risk | None = None
    options: list[Option] = Field(default_factory=list, max_length=20)
    multiple: bool = False  # choice: several options may be picked
    min_selections: int = Field(1, ge=0)
    max_selections: int | None = Field(None, ge=1)
    input: InputSpec | None = None
    content: str | None = Field(None, max_length=200_000)  # review: what to look at
    content_url: str | None = Field(None, max_length=2000)
    details: dict[str, Any] = Field(default_factory=dict)
    expires_at: datetime | None = None
    action: ProposedAction | None = None  # approval and review: exactly what will be done
    policy: ApprovalPolicy | None = None

    @model_validator(mode="after")
    def _fits_its_type(self) -> InteractionCard:
        if self.type in _DEFAULT_OPTIONS and not self.options:
            self.options = [o.model_copy() for o in _DEFAULT_OPTIONS[self.type]]
        if self.type is InteractionType.INPUT:
            if self.options:
                raise ValueError("an input card takes no options; describe the text in 'input'")
            self.input = self.input or InputSpec()
        elif self.type is InteractionType.CHOICE:
            if not 2 <= len(self.options) <= MAX_CHOICE_OPTIONS:
                raise ValueError(f"a choice card needs 2 to {MAX_CHOICE_OPTIONS} options")
        elif len(self.options) < 2:
            raise ValueError(f"an {self.type} card needs at least 2 options")
        ids = [option.id for option in self.options]
        if len(set(ids)) != len(ids):
            raise ValueError("option ids must be unique")
        if self.action is not None and self.type not in _DEFAULT_OPTIONS:
            raise ValueError("only an approval or review card can propose an action")
        if self.multiple and self.type is not InteractionType.CHOICE:
            raise ValueError("only a choice card can allow several options")
        if self.multiple:
            upper = self.max_selections or len(self.options)
            if not self.min_selections <= upper <= len(self.options):
                raise ValueError("selection bounds must satisfy min ≤ max ≤ number of options")
        decides_itself = self.policy is not None and (
            self.policy.mode == "quorum" or self.policy.on_expiry in ("deny", "approve")
        )
        if decides_itself and self.type not in _DEFAULT_OPTIONS:
            raise ValueError("a quorum or an expiry decision needs an approval or review card")
        return self

    def option(self, option_id: str) -> Option | None:
        return next((o for o in self.options if o.id == option_id), None)

    def approving_option(self) -> Option:
        """The option that counts as an approval in a quorum ("approve", else the primary)."""
        return (
            self.option("approve")
            or next((o for o in self.options if o.style == "primary"), None)
            or self.options[0]
        )

    def denying_option(self) -> Option:
        """The option a safe expiry picks ("reject", else the danger one, else another)."""
        approving = self.approving_option()
        return (
            self.option("reject")
            or next((o for o in self.options if o.style == "danger"), None)
            or next(o for o in self.options if o.id != approving.id)
        )


class ApprovalFields(TypedDict, total=False):
    """What an approval request may say beside its title, each by name and each optional.

    The one list of them: ``approval_card`` and every SDK ``request_approval`` take these
    keywords (``**fields: Unpack[ApprovalFields]``), so a new one is added here alone.
    """

    description: str  # why a person is needed
    impact: str
    risk: Risk | str | None
    options: list[Option] | None  # None: approve / reject
    details: dict[str, Any] | None
    expires_at: datetime | None
    action: ProposedAction | None  # exactly what will be done once approved
    policy: ApprovalPolicy | None  # who must approve, and what happens while nobody does


def approval_card(title: str, **fields: Unpack[ApprovalFields]) -> InteractionCard:
    """An approval card from the fields an adapter usually has at hand."""
    unknown = fields.keys() - ApprovalFields.__annotations__.keys()
    if unknown:
        # A mistyped keyword must fail loudly, not ask a person a question missing a part.
        raise TypeError(f"approval_card() got unexpected keywords: {', '.join(sorted(unknown))}")
    risk = fields.get("risk")
    return InteractionCard(
        type=InteractionType.APPROVAL,
        title=title,
        description=fields.get("description", ""),
        impact=fields.get("impact", ""),
        risk=Risk(risk) if risk is not None else None,
        options=fields.get("options") or [],
        details=fields.get("details") or {},
        expires_at=fields.get("expires_at"),
        action=fields.get("action"),
        policy=fields.get("policy"),
    )


# Options that say "no": a no never takes a second step, nor carries edits of an action.
_DECLINING_IDS = frozenset({"reject", "deny", "decline", "cancel", "request_changes", "no"})


def declines(option_id: str, style: str | None) -> bool:
    return style == "danger" or option_id.lower() in _DECLINING_IDS


class ResponseError(ValueError):
    """The answer does not fit the card; the message says what would, ``code`` which rule."""

    def __init__(self, message: str, *, code: str = "invalid_response") -> None:
        super().__init__(message)
        self.code = code


ACTION_CHANGED = "action_changed"


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URL = re.compile(r"^https?://[^\s/$.?#][^\s]*$", re.IGNORECASE)


def validate_response(card: InteractionCard, response: dict[str, Any]) -> dict[str, Any]:
    """Return the normalised answer to ``card``, or raise ``ResponseError`` saying why not."""
    if not isinstance(response, dict):
        raise ResponseError("The answer must be a JSON object.")
    comment = response.get("comment")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT_LENGTH):
        raise ResponseError(f"'comment' must be text of at most {MAX_COMMENT_LENGTH} characters.")
    if card.type is InteractionType.INPUT:
        return {"text": _checked_text(card.input or InputSpec(), response.get("text"))}
    if card.type is InteractionType.CHOICE and card.multiple:
        return _checked_selection(card, response.get("optionIds"))
    option_id = response.get("optionId")
    if not isinstance(option_id, str) or card.option(option_id) is None:
        offered = ", ".join(o.id for o in card.options)
        raise ResponseError(f"'optionId' must be one of: {offered}.")
    answer: dict[str, Any] = {"optionId": option_id}
    if card.action is not None:
        answer.update(_checked_action(card.action, response))
    if comment and card.type is not InteractionType.CHOICE:
        answer["comment"] = comment
    return answer


def _checked_action(proposed: ProposedAction, response: dict[str, Any]) -> dict[str, Any]:
    """The decision bound to the action the person saw, with their edits applied.

    ``action`` in an answer holds the edited fields; the whole action as a decision records
    it (``kind`` and ``fields``, with ``editedFrom``) is accepted too and checked the same
    way, so a recorded decision validates again to itself when the log is replayed.
    """
    seen = response.get("editedFrom", response.get("actionHash"))
    if not isinstance(seen, str):
        raise ResponseError(
            "This card proposes an action: send 'actionHash', the hash of the action shown."
        )
    if seen != proposed.hash:
        raise ResponseError(
            "The action changed since you saw it; reload the card.", code=ACTION_CHANGED
        )
    try:
        final = proposed.edited(_edits(proposed, response.get("action") or {}))
    except ActionEditError as error:
        raise ResponseError(str(error), code=error.code) from None
    if "editedFrom" in response and response.get("actionHash") != final.hash:
        raise ResponseError("'actionHash' must be the hash of the edited action.")
    bound: dict[str, Any] = {"actionHash": final.hash, "action": final.summary()}
    if final.hash != proposed.hash:
        bound["editedFrom"] = proposed.hash
    return bound


def _edits(proposed: ProposedAction, action: Any) -> Any:
    """The edited fields, whether sent alone or as the whole action."""
    whole = (
        isinstance(action, dict)
        and set(action) == {"kind", "fields"}
        and action["kind"] == proposed.kind
        and isinstance(action["fields"], dict)
        and not {"kind", "fields"} <= set(proposed.fields)
    )
    if not whole:
        return action
    fields: dict[str, Any] = action["fields"]
    if set(fields) != set(proposed.fields):
        raise ActionEditError("The action must keep its fields: change only the editable ones.")
    return fields


def _checked_selection(card: InteractionCard, option_ids: Any) -> dict[str, Any]:
    if not isinstance(option_ids, list) or not all(isinstance(i, str) for i in option_ids):
        raise ResponseError("This card allows several options: send 'optionIds', a list of ids.")
    unknown = [i for i in option_ids if card.option(i) is None]
    if unknown:
        raise ResponseError(f"Unknown option ids: {', '.join(unknown)}.")
    if len(set(option_ids)) != len(option_ids):
        raise ResponseError("Each option may be picked once.")
    upper = card.max_selections or len(card.options)
    if not card.min_selections <= len(option_ids) <= upper:
        raise ResponseError(f"Pick between {card.min_selections} and {upper} options.")
    # Keep the card's order so every surface shows the same answer the same way.
    picked = set(option_ids)
    return {"optionIds": [o.id for o in card.options if o.id in picked]}


def _checked_text(spec: InputSpec, answer: Any) -> str:
    if not isinstance(answer, str):
        raise ResponseError("This card asks for text: send 'text'.")
    text: str = answer
    if not spec.multiline:
        text = text.strip()
    if not spec.min_length <= len(text) <= spec.max_length:
        raise ResponseError(
            f"The text must be {spec.min_length} to {spec.max_length} characters long."
        )
    if spec.format is InputFormat.EMAIL and not _EMAIL.match(text):
        raise ResponseError("This must be an email address, like name@example.com.")
    if spec.format is InputFormat.URL and not _URL.match(text):
        raise ResponseError("This must be a URL starting with http:// or https://.")
    if spec.format is InputFormat.NUMBER:
        try:
            float(text)
        except ValueError:
            raise ResponseError("This must be a number.") from None
    if spec.format is InputFormat.PATTERN and spec.pattern and not re.fullmatch(spec.pattern, text):
        raise ResponseError(f"This must match the pattern {spec.pattern}.")
    return text
