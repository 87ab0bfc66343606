"""Card and notice sentences every surface shares: risk, outcome, "who decided".

Surfaces differ in markup (HTML mail, Telegram HTML, plain text) but must say the same
thing; these functions return plain text and each renderer escapes it for its own markup.
"""

from __future__ import annotations

from hub.channels.cards import Card
from hub.channels.i18n import text, when


def risk_text(card: Card, language: str) -> str | None:
    """Risk in words and an icon, never by colour alone (spec §7.3)."""
    return text(language, f"risk.{card.risk.value}") if card.risk else None


def via_text(via: str | None, language: str) -> str:
    if not via:
        return ""
    key = f"via.{via}"
    try:
        return text(language, key)
    except KeyError:
        return via


def who_text(card: Card) -> str:
    return card.responded_by_name or (card.responded_by or "").partition(":")[2] or "?"


def chosen_text(card: Card, language: str) -> str:
    """What was decided, without ever repeating a sensitive answer."""
    if card.chosen:
        return ", ".join(option.label for option in card.chosen)
    if card.answer_hidden:
        return text(language, "answer_hidden")
    if card.answer_text is not None:
        return f"“{card.answer_text}”"
    return text(language, "outcome.answered")


def outcome_text(card: Card, language: str) -> str | None:
    """One sentence for a card that is no longer pending; None while it is."""
    if card.status == "resolved":
        outcome = chosen_text(card, language)
        if card.comment:
            outcome = f"{outcome} (“{card.comment}”)"
        return text(
            language,
            "outcome.resolved",
            outcome=outcome,
            who=who_text(card),
            via=via_text(card.via, language),
            when=when(card.responded_at),
        )
    if card.status in ("expired", "cancelled"):
        return text(language, f"outcome.{card.status}")
    return None


def already_decided_text(card: Card, language: str) -> str:
    """What a too-late answer is told: "Already decided by X via Y, T." """
    return text(
        language,
        "already_decided",
        who=who_text(card),
        via=via_text(card.via, language),
        when=when(card.responded_at),
    )


def agent_text(card: Card, language: str) -> str:
    return card.agent_name or text(language, "someone")


__all__ = [
    "agent_text",
    "already_decided_text",
    "chosen_text",
    "outcome_text",
    "risk_text",
    "via_text",
    "who_text",
]
