"""Card and notice sentences every surface shares: risk, outcome, "who decided", times.

Surfaces differ in markup (HTML mail, Telegram HTML, plain text) but must say the same
thing; these functions return plain text and each renderer escapes it for its own markup.
They speak the language in effect (``hub.i18n.speaking(recipient.language)``), from the
catalogues the web UI uses.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hub.channels.cards import Card
from hub.i18n import duration
from hub.i18n import gettext as _
from hub.protocol.interactions import Risk


def when(moment: datetime | None) -> str:
    """Times in messages: UTC, to the minute, unambiguous in both languages."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def risk_text(card: Card) -> str | None:
    """Risk in words and an icon, never by colour alone (spec §7.3)."""
    if card.risk is None:
        return None
    words = {
        Risk.LOW: "ℹ️ " + _("Low risk"),
        Risk.MEDIUM: "⚠️ " + _("Medium risk"),
        Risk.HIGH: "⛔ " + _("High risk"),
    }
    return words[card.risk]


def via_text(via: str | None) -> str:
    """The surface an answer came through, as the sentence "… via {surface}" needs it."""
    surfaces = {
        "web": _("the web"),
        "api": _("the API"),
        "email": _("email"),
        "telegram": _("Telegram"),
        "feishu": _("Feishu"),
        "slack": _("Slack"),
        "notebook": _("a notebook"),
        "push": _("a push notification"),
        "policy": _("the approval policy"),
    }
    # A plugin's surface is named as it names itself.
    return surfaces.get(via or "", via or "")


def who_text(card: Card) -> str:
    # A person reads this: a name, never the actor's id.
    return card.responded_by_name or _("someone")


def chosen_text(card: Card) -> str:
    """What was decided, without ever repeating a sensitive answer."""
    if card.chosen:
        return ", ".join(option.label for option in card.chosen)
    if card.answer_hidden:
        return _("an answer (hidden: sensitive)")
    if card.answer_text is not None:
        return f"“{card.answer_text}”"
    return _("answered")


def outcome_text(card: Card) -> str | None:
    """One sentence for a card that is no longer pending; None while it is."""
    if card.status == "resolved":
        outcome = chosen_text(card)
        if card.comment:
            outcome = f"{outcome} (“{card.comment}”)"
        return _(
            "%(outcome)s — by %(who)s via %(via)s, %(when)s.",
            outcome=outcome,
            who=who_text(card),
            via=via_text(card.via),
            when=when(card.responded_at),
        )
    if card.status == "expired":
        return _("This card expired; nothing was decided.")
    if card.status == "cancelled":
        return withdrawn_text(card)
    return None


def withdrawn_text(card: Card) -> str:
    """Why a cancelled card takes no answer: its agent took it back (and why), or its task
    ended. The agent's note follows in its own words, as plain text."""
    if card.withdrawal_reason is None:
        return _("This card was withdrawn: its task ended.")
    if card.withdrawal_reason == "answered_in_terminal":
        sentence = _("Answered in the terminal; this card takes no answer.")
    else:
        sentence = _("The agent withdrew this card; it takes no answer.")
    return f"{sentence} “{card.withdrawal_note}”" if card.withdrawal_note else sentence


def already_decided_text(card: Card) -> str:
    """What a too-late answer is told: "Already decided by X via Y, T." """
    return _(
        "Already decided by %(who)s via %(via)s, %(when)s.",
        who=who_text(card),
        via=via_text(card.via),
        when=when(card.responded_at),
    )


def agent_text(card: Card) -> str:
    return card.agent_name or _("An agent")


def policy_lines(card: Card) -> list[str]:
    """The card's approval policy and its votes so far, a sentence a line; [] without one."""
    policy = card.policy
    if policy is None:
        return []

    def names(user_ids: tuple[str, ...]) -> str:
        return ", ".join(card.people.get(u) or _("someone") for u in user_ids)

    if policy.is_quorum and policy.approvers:
        lines = [
            _(
                "👥 Needs %(required)s of %(total)s approvals: %(names)s.",
                required=policy.required,
                total=len(policy.approvers),
                names=names(policy.approvers),
            )
        ]
    elif policy.is_quorum:
        lines = [_("👥 Needs %(required)s approvals.", required=policy.required)]
    elif policy.approvers:
        lines = [_("👥 Any one of %(names)s decides.", names=names(policy.approvers))]
    else:
        lines = []
    if policy.is_quorum and card.is_pending:
        lines.append(
            _(
                "%(count)s of %(required)s approvals so far.",
                count=policy.approvals,
                required=policy.required,
            )
        )
    for vote in policy.votes:
        option = card.option(str(vote.get("optionId")))
        who = str(vote.get("actor", "")).partition(":")[2]
        label = option.label if option else vote.get("optionId")
        via = via_text(str(vote.get("via") or ""))
        lines.append(
            "· "
            + _(
                "%(who)s: %(label)s (via %(via)s)",
                who=card.people.get(who) or _("someone"),
                label=label,
                via=via,
            )
        )
    if card.is_pending:
        if policy.remind_after_s:
            lines.append(_("Reminder after %(delay)s.", delay=duration(policy.remind_after_s)))
        if policy.escalate_after_s:
            lines.append(
                _(
                    "Escalates to %(names)s after %(delay)s.",
                    names=names(policy.escalate_to),
                    delay=duration(policy.escalate_after_s),
                )
            )
        if card.expires_at:
            lines.append(_expiry_text(policy.expiry))
    return lines


def _expiry_text(expiry: str) -> str:
    if expiry == "deny":
        return _("If nobody decides in time, it is denied.")
    if expiry == "approve":
        return _("If nobody decides in time, it is approved.")
    return _("If nobody decides in time, it expires undecided.")


def voted_text(card: Card, user_id: str) -> str | None:
    """What a voter is told about their vote on a still-open quorum card; None otherwise."""
    vote = card.policy.vote_of(user_id) if card.policy and card.is_pending else None
    if vote is None or card.policy is None:
        return None
    return _(
        "Your vote is recorded: %(count)s of %(required)s approvals.",
        count=card.policy.approvals,
        required=card.policy.required,
    )


__all__ = [
    "agent_text",
    "already_decided_text",
    "chosen_text",
    "outcome_text",
    "policy_lines",
    "risk_text",
    "via_text",
    "voted_text",
    "when",
    "who_text",
    "withdrawn_text",
]


def not_allowed_to_answer_text() -> str:
    """Why a link or a button sent earlier no longer answers: its person is now a viewer
    (or no longer a member)."""
    return _(
        "You can read this card but not answer it: viewers of a workspace do not decide. "
        "Ask an owner of the workspace to make you a member."
    )
