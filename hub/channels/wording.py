"""Card and notice sentences every surface shares: risk, outcome, "who decided".

Surfaces differ in markup (HTML mail, Telegram HTML, plain text) but must say the same
thing; these functions return plain text and each renderer escapes it for its own markup.
"""

from __future__ import annotations

from hub.channels.cards import Card
from hub.channels.i18n import delay, text, when


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


def policy_lines(card: Card, language: str) -> list[str]:
    """The card's approval policy and its votes so far, a sentence a line; [] without one."""
    policy = card.policy
    if policy is None:
        return []

    def names(user_ids: tuple[str, ...]) -> str:
        return ", ".join(card.people.get(u, u) for u in user_ids)

    if policy.is_quorum and policy.approvers:
        lines = [
            text(
                language,
                "policy.quorum",
                required=policy.required,
                total=len(policy.approvers),
                names=names(policy.approvers),
            )
        ]
    elif policy.is_quorum:
        lines = [text(language, "policy.quorum_open", required=policy.required)]
    elif policy.approvers:
        lines = [text(language, "policy.any_named", names=names(policy.approvers))]
    else:
        lines = []
    if policy.is_quorum and card.is_pending:
        lines.append(
            text(language, "policy.count", count=policy.approvals, required=policy.required)
        )
    for vote in policy.votes:
        option = card.option(str(vote.get("optionId")))
        who = str(vote.get("actor", "")).partition(":")[2]
        lines.append(
            "· "
            + text(
                language,
                "policy.vote",
                who=card.people.get(who, who),
                label=option.label if option else vote.get("optionId"),
                via=via_text(str(vote.get("via") or ""), language),
            )
        )
    if card.is_pending:
        if policy.remind_after_s:
            lines.append(text(language, "policy.remind", delay=delay(policy.remind_after_s)))
        if policy.escalate_after_s:
            lines.append(
                text(
                    language,
                    "policy.escalate",
                    names=names(policy.escalate_to),
                    delay=delay(policy.escalate_after_s),
                )
            )
        if card.expires_at:
            lines.append(text(language, f"policy.expiry.{policy.expiry}"))
    return lines


def voted_text(card: Card, user_id: str, language: str) -> str | None:
    """What a voter is told about their vote on a still-open quorum card; None otherwise."""
    vote = card.policy.vote_of(user_id) if card.policy and card.is_pending else None
    if vote is None or card.policy is None:
        return None
    return text(language, "voted", count=card.policy.approvals, required=card.policy.required)


def agent_text(card: Card, language: str) -> str:
    return card.agent_name or text(language, "someone")


__all__ = [
    "agent_text",
    "already_decided_text",
    "chosen_text",
    "outcome_text",
    "policy_lines",
    "risk_text",
    "via_text",
    "voted_text",
    "who_text",
]
