"""Card and notice sentences every surface shares: risk, outcome, "who decided", times.

Surfaces differ in markup (HTML mail, Telegram HTML, plain text) but must say the same
thing; these functions return plain text and each renderer escapes it for its own markup.
They speak the language in effect (``hub.i18n.speaking(recipient.language)``), from the
catalogues the web UI uses.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hub.channels.cards import Card
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
        "notebook": _("a notebook"),
    }
    # A plugin's surface is named as it names itself.
    return surfaces.get(via or "", via or "")


def who_text(card: Card) -> str:
    return card.responded_by_name or (card.responded_by or "").partition(":")[2] or "?"


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
        return _("This card was withdrawn: its task ended.")
    return None


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


__all__ = [
    "agent_text",
    "already_decided_text",
    "chosen_text",
    "outcome_text",
    "risk_text",
    "via_text",
    "when",
    "who_text",
]


def not_allowed_to_answer_text() -> str:
    """Why a link or a button sent earlier no longer answers: its person is now a viewer
    (or no longer a member)."""
    return _(
        "You can read this card but not answer it: viewers of a workspace do not decide. "
        "Ask an owner of the workspace to make you a member."
    )
