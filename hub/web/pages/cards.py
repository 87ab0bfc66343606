"""The interaction card as the web shows it (spec §7.3).

Reads the card an agent asked for (``hub.protocol.interactions.InteractionCard``, the same
model that validated it) and lays it out in the order of §7.3: why you are needed → impact →
what you can do → details, folded. Nothing here decides whether an answer is valid: the
browser checks formats for a quick hint, and the core checks again on every surface.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError

from hub.channels.action_view import ActionView, action_view, edits_from_form
from hub.core.approvals.policies import PolicyStatus, policy_status
from hub.core.store.models import Interaction
from hub.core.work.views import effective_interaction_status
from hub.protocol.interactions import InputFormat, InteractionCard, Option, Risk, declines
from hub.web.pages.i18n import gettext as _
from hub.web.pages.names import Names

# Browser-side format hints; the server's check (validate_response) stays the authority.
_HTML_INPUT_TYPES = {InputFormat.EMAIL: "email", InputFormat.URL: "url"}
_NUMBER_PATTERN = r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?"


def _in_the_hubs_words(option: Option) -> Option:
    """An option the protocol supplied for a card whose agent named none is the hub's
    wording, translated like the page's; an agent's own labels are shown as sent."""
    hub_words = {
        ("approve", "Approve"): _("Approve"),
        ("reject", "Reject"): _("Reject"),
        ("request_changes", "Request changes"): _("Request changes"),
    }
    label = hub_words.get((option.id, option.label))
    return option if label is None else option.model_copy(update={"label": label})


def safe_url(url: str | None) -> str | None:
    """Only http(s) links become links; anything else (``javascript:``…) stays text."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return url.strip()
    return None


@dataclass
class CardView:
    interaction: Interaction
    card: InteractionCard | None
    raw: dict[str, Any]
    status: str
    responder_name: str | None = None
    agent_name: str | None = None
    task: dict[str, Any] | None = None
    details: list[tuple[str, str]] = field(default_factory=list)
    policy: PolicyStatus | None = None
    people: dict[str, str] = field(default_factory=dict)  # user id → display name
    viewer_id: str | None = None  # the person looking at the card
    agent_away: bool = False  # the agent that asked is offline: an answer waits for it

    def names(self, user_ids: Iterable[str]) -> str:
        return Names(people=self.people).people_list(user_ids)

    def voter_name(self, vote: dict[str, Any]) -> str:
        return Names(people=self.people).actor(str(vote.get("actor", "")))

    def option_label(self, option_id: str) -> str:
        return next((o.label for o in self.options if o.id == option_id), option_id)

    @property
    def named_elsewhere(self) -> bool:
        """The policy names its approvers and the viewer is not one: no form to offer."""
        if self.policy is None or not self.policy.approvers or self.viewer_id is None:
            return False
        return self.viewer_id not in self.policy.approvers

    @property
    def my_vote(self) -> dict[str, Any] | None:
        """The vote the viewer cast on this quorum card, if any: they are told, not asked."""
        if self.policy is None or self.viewer_id is None:
            return None
        return self.policy.vote_of(self.viewer_id)

    @property
    def id(self) -> str:
        return self.interaction.id

    @property
    def type(self) -> str:
        return self.interaction.type

    @property
    def title(self) -> str:
        return str(self.raw.get("title") or self.interaction.type)

    @property
    def why(self) -> str:
        return str(self.raw.get("description") or "")

    @property
    def impact(self) -> str:
        return str(self.raw.get("impact") or "")

    @property
    def risk(self) -> str | None:
        return self.card.risk.value if self.card and self.card.risk else None

    @property
    def options(self) -> list[Option]:
        return [_in_the_hubs_words(o) for o in self.card.options] if self.card else []

    @property
    def multiple(self) -> bool:
        return bool(self.card and self.card.multiple)

    @property
    def open(self) -> bool:
        return self.status == "pending" and self.card is not None

    @property
    def content(self) -> str | None:
        return self.card.content if self.card else None

    @property
    def content_url(self) -> str | None:
        return self.card.content_url if self.card else None

    @property
    def content_link(self) -> str | None:
        return safe_url(self.content_url)

    @property
    def action(self) -> ActionView | None:
        """The exact action: as decided once answered, as proposed until then."""
        return action_view(
            self.card.action if self.card else None, self.status, self.interaction.response
        )

    def needs_confirmation(self, option: Option) -> bool:
        """A high-risk "yes" takes a deliberate second step; a "no" never does."""
        if self.risk != Risk.HIGH.value:
            return False
        return not declines(option.id, option.style)

    @property
    def one_press_option(self) -> Option | None:
        """The "yes" a row of the inbox offers as one press: an approval any answer of the
        viewer's decides or votes on, whose "yes" takes no second step (not high risk) and
        needs nothing typed. None when the card must be opened to be answered."""
        if not self.open or self.type != "approval" or self.multiple:
            return None
        if self.named_elsewhere or self.my_vote is not None:
            return None
        agreeing = [o for o in self.options if not declines(o.id, o.style)]
        chosen = next((o for o in agreeing if o.recommended or o.style == "primary"), None)
        option = chosen or next(iter(agreeing), None)
        if option is None or self.needs_confirmation(option):
            return None
        return option

    def input_attributes(self) -> dict[str, Any]:
        spec = self.card.input if self.card else None
        if spec is None:
            return {}
        attributes: dict[str, Any] = {"maxlength": spec.max_length}
        if spec.min_length:
            attributes["minlength"] = spec.min_length
            attributes["required"] = True
        if spec.format in _HTML_INPUT_TYPES:
            attributes["type"] = _HTML_INPUT_TYPES[spec.format]
        elif spec.format is InputFormat.NUMBER:
            attributes["inputmode"] = "decimal"
            attributes["pattern"] = _NUMBER_PATTERN
        elif spec.format is InputFormat.PATTERN and spec.pattern:
            attributes["pattern"] = spec.pattern
        if spec.placeholder:
            attributes["placeholder"] = spec.placeholder
        return attributes

    @property
    def input_format(self) -> str:
        spec = self.card.input if self.card else None
        return spec.format.value if spec else "text"

    @property
    def input_multiline(self) -> bool:
        return bool(self.card and self.card.input and self.card.input.multiline)

    @property
    def input_sensitive(self) -> bool:
        return bool(self.card and self.card.input and self.card.input.sensitive)

    def chosen_labels(self) -> list[str]:
        response = self.interaction.response or {}
        ids = response.get("optionIds") or (
            [response["optionId"]] if "optionId" in response else []
        )
        labels = {o.id: o.label for o in self.options}
        return [labels.get(str(i), str(i)) for i in ids]

    @property
    def answer_text(self) -> str | None:
        response = self.interaction.response or {}
        if "text" not in response:
            return None
        # A sensitive answer is not shown again, not even to its author (spec §11).
        return "••••••" if self.input_sensitive else str(response["text"])

    @property
    def comment(self) -> str | None:
        comment = (self.interaction.response or {}).get("comment")
        return str(comment) if comment else None

    @property
    def delivered_at(self) -> Any:
        """When the answer went out on the agent's connection; None until then."""
        return self.interaction.delivered_at

    @property
    def waiting_for_agent(self) -> bool:
        """Decided, not delivered, and the agent is away: the answer waits for it."""
        return self.status == "resolved" and self.delivered_at is None and self.agent_away

    @property
    def withdrawal_reason(self) -> str | None:
        """Why the agent took the card back; None unless it did (a card cancelled because
        its task ended has none)."""
        reason = (self.interaction.withdrawal or {}).get("reason")
        return str(reason) if reason else None

    @property
    def closed_as(self) -> str:
        """The status a closed card's header shows: a withdrawn card is stored as cancelled,
        but the person reads why it closed ("answered in the terminal"), not "cancelled"."""
        if self.withdrawal_reason == "answered_in_terminal":
            return "answered_in_terminal"
        if self.withdrawal_reason:
            return "withdrawn"
        return str(self.status)

    @property
    def withdrawal_note(self) -> str:
        """The agent's own words on the withdrawal, shown as plain text."""
        return str((self.interaction.withdrawal or {}).get("note") or "")


def card_view(
    interaction: Interaction,
    *,
    responder_name: str | None = None,
    agent_name: str | None = None,
    task: dict[str, Any] | None = None,
    people: dict[str, str] | None = None,
    viewer_id: str | None = None,
    agent_away: bool = False,
) -> CardView:
    raw = dict(interaction.payload or {})
    try:
        card: InteractionCard | None = InteractionCard.model_validate(raw)
    except ValidationError:
        card = None  # shown read-only with its raw fields; nothing can be answered
    details = [
        (str(key), value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in (raw.get("details") or {}).items()
    ]
    return CardView(
        interaction=interaction,
        card=card,
        raw=raw,
        status=effective_interaction_status(interaction),
        responder_name=responder_name,
        agent_name=agent_name,
        task=task,
        details=details,
        policy=policy_status(interaction) if card is not None else None,
        people=people or {},
        viewer_id=viewer_id,
        agent_away=agent_away,
    )


def response_from_form(view: CardView, form: Any) -> dict[str, Any]:
    """The respond payload of the public contract, built from the card's form."""
    if view.type == "input":
        return {"text": form.get("text", "")}
    if view.multiple:
        return {"optionIds": form.getlist("optionIds")}
    response: dict[str, Any] = {"optionId": form.get("optionId", "")}
    comment = (form.get("comment") or "").strip()
    if comment:
        response["comment"] = comment
    proposed = view.card.action if view.card else None
    if proposed is not None:
        response["actionHash"] = form.get("actionHash", "")
        option = view.card.option(response["optionId"]) if view.card else None
        # Edits shape what a "yes" does; a "no" does nothing, so they are not sent with it.
        edits = edits_from_form(proposed, form)
        if edits and option is not None and not declines(option.id, option.style):
            response["action"] = edits
    return response
