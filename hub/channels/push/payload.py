"""What a push carries: a small JSON document the service worker turns into a notification.

Three kinds, each at most ``MAX_BYTES`` (push services take about 4 KB):

- ``card``: a card waiting for the person: its title, the agent, the risk in words, the
  link that opens it, and, where the lock screen can answer it in one tap, its options as
  actions, each with its own signed single-use link that decides that option only
  (``hub.channels.links``, recorded ``via`` push). A high-risk card has no actions: the
  link opens its page, where the second, deliberate step is.
- ``close``: the card was decided elsewhere; the worker closes its notification.
- ``notice``: a task failed, with the link to it.

Nothing a person typed into a card is ever in a push, and an action's link binds the
action's hash the card showed, as an email's links do. Agent text stays text: the worker
puts it in a notification's title and body, which browsers never render as markup.
"""

from __future__ import annotations

import json
from typing import Any

from hub.channels.base import ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.wording import agent_text, risk_text
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.interactions import InteractionType

MAX_BYTES = 3000
MAX_TITLE_CHARS = 120
# Browsers show at most two actions on a notification (Chrome's Notification.maxActions).
MAX_ACTIONS = 2


def card_payload(card: Card, recipient: Recipient, context: ChannelContext) -> bytes:
    with speaking(recipient.language):
        body = agent_text(card)
        risk = risk_text(card)
        if risk:
            body += " · " + risk
        document: dict[str, Any] = {
            "type": "card",
            "id": card.id,
            "title": _short(card.title),
            "body": body,
            "risk": card.risk.value if card.risk else None,
            "url": context.card_link(card, recipient, via="push"),
            "actions": [],
        }
        if _answerable_in_one_tap(card):
            document["actions"] = [
                {
                    "action": f"option-{n}",
                    "title": _short(option.label, 40),
                    "url": context.card_link(
                        card,
                        recipient,
                        via="push",
                        option_id=option.id,
                        action_hash=card.action_hash,
                    ),
                }
                for n, option in enumerate(card.options)
            ]
    encoded = _encoded(document)
    if len(encoded) > MAX_BYTES:  # long links: the notification opens the card instead
        encoded = _encoded({**document, "actions": []})
    return encoded


def close_payload(card: Card) -> bytes:
    return _encoded({"type": "close", "id": card.id})


def notice_payload(notice: Notice, recipient: Recipient, task_url: str) -> bytes:
    with speaking(recipient.language):
        agent = notice.agent_name or _("An agent")
        title = _("The task “%(title)s” by %(agent)s failed.", title=notice.task_title, agent=agent)
        body = _("Reason: %(error)s", error=notice.error) if notice.error else ""
    document = {
        "type": "notice",
        "id": notice.task_id,
        "title": _short(title),
        "body": _short(body, 300),
        "url": task_url,
    }
    return _encoded(document)


def test_payload(recipient: Recipient, url: str) -> bytes:
    with speaking(recipient.language):
        document = {
            "type": "notice",
            "id": "test",
            "title": _("LineUp Hub"),
            "body": _("Push works in this browser."),
            "url": url,
        }
    return _encoded(document)


def _answerable_in_one_tap(card: Card) -> bool:
    return (
        card.is_pending
        and not card.is_high_risk
        and card.type in (InteractionType.APPROVAL, InteractionType.CHOICE)
        and not card.multiple
        and not card.takes_text
        and 0 < len(card.options) <= MAX_ACTIONS
    )


def _short(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _encoded(document: dict[str, Any]) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
