"""Cards as Telegram messages: HTML text and an inline keyboard of short callback data.

Callback data is ``<card>:<action>[:<n>]`` — the ``DeliveredCard``'s 8-character opaque id,
one letter, and an option's position — well under Telegram's 64 bytes whatever the option
ids are, and meaningless without the server-side row it names:

* ``o:n`` pick option n (a high-risk approval first asks ``c:n`` to confirm; a review's
  "request changes" first asks for a comment by forced reply)
* ``c:n`` confirm option n, ``x`` take the pending confirmation back
* ``t:n`` tick/untick option n of a multi-select, ``s`` submit the ticks
"""

from __future__ import annotations

import html
from typing import Any

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup

from hub.channels.base import Capabilities, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.i18n import text, when
from hub.channels.wording import (
    agent_text,
    outcome_text,
    policy_lines,
    risk_text,
    voted_text,
)

MAX_MESSAGE_CHARS = 4096
REQUEST_CHANGES = "request_changes"


def _e(value: str) -> str:
    return html.escape(value, quote=False)


def _header(card: Card, language: str) -> list[str]:
    lines = [f"<b>{_e(card.title)}</b>"]
    about = agent_text(card, language)
    if card.task_title:
        about += f" · {text(language, 'task')}: {card.task_title}"
    lines.append(_e(about))
    risk = risk_text(card, language)
    if risk:
        lines.append(f"<b>{_e(risk)}</b>")
    return lines


def card_text(
    card: Card, language: str, capabilities: Capabilities, *, viewer_id: str | None = None
) -> tuple[str, bool]:
    """The message text and whether the card fits natively (else it links to the web).

    ``viewer_id``: the person the message is for; once they voted on a quorum card, their
    copy says so instead of asking again."""
    lines = _header(card, language)
    policy = [_e(line) for line in policy_lines(card, language)]
    if not card.is_pending:
        lines += ["", _e(outcome_text(card, language) or ""), *policy]
        return "\n".join(lines), True
    voted = voted_text(card, viewer_id, language) if viewer_id else None
    if voted:
        return "\n".join([*lines, "", *policy, "", f"<b>{_e(voted)}</b>"]), True
    if policy:
        lines += ["", *policy]
    full = list(lines)
    for key, value in (("why", card.why), ("impact", card.impact)):
        if value:
            full += ["", f"<b>{_e(text(language, key))}</b>", _e(value)]
    if card.content:
        full += [
            "",
            f"<b>{_e(text(language, 'review_content'))}</b>",
            f"<pre>{_e(card.content)}</pre>",
        ]
    if card.content_url:
        full += [_e(card.content_url)]
    if card.multiple:
        full += ["", _e(text(language, "tg.toggle_hint"))]
    if card.takes_text:
        full += ["", _e(text(language, "tg.reply_prompt"))]
    if card.expires_at:
        full += ["", _e(text(language, "expires", when=when(card.expires_at)))]
    if card.details:
        pairs = "\n".join(f"{_e(str(k))}: {_e(str(v))}" for k, v in card.details.items())
        full += [
            "",
            f"<b>{_e(text(language, 'details'))}</b>",
            f"<blockquote expandable>{pairs}</blockquote>",
        ]
    rendered = "\n".join(full)
    if capabilities.can_render(card) and len(rendered) <= MAX_MESSAGE_CHARS:
        return rendered, True
    # Too much for one message: say so and link to the whole card, never show part of it.
    return "\n".join([*lines, "", _e(text(language, "open_full"))]), False


def _button(label: str, data: str) -> InlineKeyboardButton:
    return InlineKeyboardButton(label, callback_data=data)


def card_keyboard(
    card: Card, short_id: str, state: dict[str, Any], language: str, web_link: str | None
) -> InlineKeyboardMarkup | ForceReply | None:
    """The controls for the card's current state; None once it is decided (or voted on)."""
    if not card.is_pending:
        return None
    if card.policy is not None and card.policy.vote_of(str(state.get("viewer", ""))):
        return None
    if web_link is not None:
        return InlineKeyboardMarkup(
            [[InlineKeyboardButton(text(language, "open_card"), url=web_link)]]
        )
    if card.takes_text:
        return ForceReply(input_field_placeholder=(card.input.placeholder if card.input else None))
    confirming = state.get("confirm")
    if confirming is not None:
        label = card.options[confirming].label
        return InlineKeyboardMarkup(
            [
                [
                    _button(
                        text(language, "tg.confirm_yes", label=label), f"{short_id}:c:{confirming}"
                    )
                ],
                [_button(text(language, "tg.cancel"), f"{short_id}:x")],
            ]
        )
    if card.multiple:
        ticked = set(state.get("ticked") or [])
        rows = [
            [_button(("☑️ " if i in ticked else "⬜ ") + o.label, f"{short_id}:t:{i}")]
            for i, o in enumerate(card.options)
        ]
        rows.append(
            [_button(text(language, "tg.submit_count", count=len(ticked)), f"{short_id}:s")]
        )
        return InlineKeyboardMarkup(rows)
    return InlineKeyboardMarkup(
        [
            [_button(_option_label(card, i, language), f"{short_id}:o:{i}")]
            for i in range(len(card.options))
        ]
    )


def _option_label(card: Card, index: int, language: str) -> str:
    option = card.options[index]
    label = option.label
    if option.style == "primary" or option.recommended:
        label = "✅ " + label
    elif option.style == "danger":
        label = "✖️ " + label
    return label


def notice_text(notice: Notice, language: str, task_url: str) -> str:
    agent = notice.agent_name or text(language, "someone")
    lines = [f"<b>✖ {_e(text(language, 'failed_body', title=notice.task_title, agent=agent))}</b>"]
    if notice.error:
        lines.append(_e(text(language, "failed_reason", error=notice.error)))
    lines.append(f'<a href="{_e(task_url)}">{_e(text(language, "open_task"))}</a>')
    return "\n".join(lines)


def recipient_chat(recipient: Recipient) -> int:
    return int(recipient.address or 0)
