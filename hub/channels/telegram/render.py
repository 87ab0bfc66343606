"""Cards as Telegram messages: HTML text and an inline keyboard of short callback data.

The buttons' data is ``<card>:<action>[:<n>]`` (``hub.channels.telegram.callbacks``): the
``DeliveredCard``'s opaque id, an action code and an option's position — well under
Telegram's 64 bytes whatever the option ids are. A message answering several cards at once
has its own ``batch:`` data (``hub.channels.telegram.batches``).

Everything here speaks the language in effect: the channel sets it to the recipient's.
"""

from __future__ import annotations

import html
from typing import Any

from telegram import ForceReply, InlineKeyboardButton, InlineKeyboardMarkup

from hub.channels.action_view import ActionView
from hub.channels.base import Capabilities, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.telegram.callbacks import CardAction, card_data
from hub.channels.wording import (
    agent_text,
    outcome_text,
    policy_lines,
    risk_text,
    voted_text,
    when,
)
from hub.i18n import gettext as _

MAX_MESSAGE_CHARS = 4096
REQUEST_CHANGES = "request_changes"


def _e(value: str) -> str:
    return html.escape(value, quote=False)


def _header(card: Card) -> list[str]:
    lines = [f"<b>{_e(card.title)}</b>"]
    about = agent_text(card)
    if card.task_title:
        about += f" · {_('Task')}: {card.task_title}"
    lines.append(_e(about))
    risk = risk_text(card)
    if risk:
        lines.append(f"<b>{_e(risk)}</b>")
    return lines


def card_text(
    card: Card, capabilities: Capabilities, *, viewer_id: str | None = None
) -> tuple[str, bool]:
    """The message text and whether the card fits natively (else it links to the web).

    ``viewer_id``: the person the message is for; once they voted on a quorum card, their
    copy says so instead of asking again."""
    lines = _header(card)
    policy = [_e(line) for line in policy_lines(card)]
    if not card.is_pending:
        lines += ["", _e(outcome_text(card) or ""), *policy]
        if card.action:
            lines += [_e(_fingerprint(card.action))]
        return "\n".join(lines), True
    voted = voted_text(card, viewer_id) if viewer_id else None
    if voted:
        return "\n".join([*lines, "", *policy, "", f"<b>{_e(voted)}</b>"]), True
    if policy:
        lines += ["", *policy]
    full = list(lines)
    for heading, value in ((_("Why you are needed"), card.why), (_("Impact"), card.impact)):
        if value:
            full += ["", f"<b>{_e(heading)}</b>", _e(value)]
    if card.action:
        full += ["", *_action_lines(card.action)]
    if card.content:
        full += [
            "",
            f"<b>{_e(_('What to review'))}</b>",
            f"<pre>{_e(card.content)}</pre>",
        ]
    if card.content_url:
        full += [_e(card.content_url)]
    if card.multiple:
        full += ["", _e(_("Tick the options, then Submit."))]
    if card.takes_text:
        full += ["", _e(_("Reply to this message with your answer."))]
    if card.expires_at:
        full += ["", _e(_("Answer before %(when)s.", when=when(card.expires_at)))]
    if card.details:
        pairs = "\n".join(f"{_e(str(k))}: {_e(str(v))}" for k, v in card.details.items())
        full += [
            "",
            f"<b>{_e(_('Details'))}</b>",
            f"<blockquote expandable>{pairs}</blockquote>",
        ]
    rendered = "\n".join(full)
    if capabilities.can_render(card) and len(rendered) <= MAX_MESSAGE_CHARS:
        return rendered, True
    # Too much for one message: say so and link to the whole card, never show part of it.
    return "\n".join(
        [
            *lines,
            "",
            _e(
                _("The content is too long to show here: open it on the web to read it and answer.")
            ),
        ]
    ), False


def _action_lines(action: ActionView) -> list[str]:
    """The exact action, every field as the agent sent it (escaped, never markup)."""
    lines = [f"<b>{_e(_('Exact action'))}</b>: <code>{_e(action.kind)}</code>"]
    for field in action.fields:
        editable = f" ({_e(_('editable'))})" if field.editable else ""
        lines.append(f"{_e(field.name)}{editable}:")
        lines.append(f"<pre>{_e(field.text)}</pre>")
    lines.append(f"<i>{_e(_fingerprint(action))}</i>")
    return lines


def _fingerprint(action: ActionView) -> str:
    shown = _("Fingerprint %(short)s", short=action.fingerprint)
    if action.edited_from_fingerprint:
        shown += " · " + _("edited from %(short)s", short=action.edited_from_fingerprint)
    return shown


def card_keyboard(
    card: Card, short_id: str, state: dict[str, Any], web_link: str | None
) -> InlineKeyboardMarkup | ForceReply | None:
    """The controls for the card's current state; None once it is decided (or voted on).

    A card whose action has editable fields also gets a link to edit it on the web
    (``state["editLink"]``): a chat message cannot hold that form.
    """
    if not card.is_pending:
        return None
    if card.policy is not None and card.policy.vote_of(str(state.get("viewer", ""))):
        return None
    if web_link is not None:
        return InlineKeyboardMarkup(
            [[InlineKeyboardButton(_("Open the card on the web"), url=web_link)]]
        )
    if card.takes_text:
        return ForceReply(input_field_placeholder=(card.input.placeholder if card.input else None))
    if state.get("confirm") is not None:
        return _confirming(card, short_id, state["confirm"])
    if card.multiple:
        return _ticks(card, short_id, set(state.get("ticked") or []))
    return _options(card, short_id, state.get("editLink"))


def _row(
    label: str, short_id: str, action: CardAction, index: int | None = None
) -> list[InlineKeyboardButton]:
    """A row of one button, pressing ``action`` (on option ``index``) of this card."""
    return [InlineKeyboardButton(label, callback_data=card_data(short_id, action, index))]


def _confirming(card: Card, short_id: str, index: int) -> InlineKeyboardMarkup:
    label = _("✅ Yes: %(label)s", label=card.options[index].label)
    return InlineKeyboardMarkup(
        [
            _row(label, short_id, CardAction.CONFIRM, index),
            _row(_("↩️ Cancel"), short_id, CardAction.CANCEL),
        ]
    )


def _ticks(card: Card, short_id: str, ticked: set[int]) -> InlineKeyboardMarkup:
    rows = [
        _row(("☑️ " if i in ticked else "⬜ ") + o.label, short_id, CardAction.TICK, i)
        for i, o in enumerate(card.options)
    ]
    rows.append(_row(_("Submit (%(count)s)", count=len(ticked)), short_id, CardAction.SUBMIT))
    return InlineKeyboardMarkup(rows)


def _options(card: Card, short_id: str, edit_link: str | None) -> InlineKeyboardMarkup:
    rows = [
        _row(_option_label(card, i), short_id, CardAction.PICK, i) for i in range(len(card.options))
    ]
    if edit_link:
        rows.append([InlineKeyboardButton(_("Edit and approve on the web"), url=edit_link)])
    return InlineKeyboardMarkup(rows)


def _option_label(card: Card, index: int) -> str:
    option = card.options[index]
    label = option.label
    if option.style == "primary" or option.recommended:
        label = "✅ " + label
    elif option.style == "danger":
        label = "✖️ " + label
    return label


def notice_text(notice: Notice, task_url: str) -> str:
    agent = notice.agent_name or _("An agent")
    failed = _("The task “%(title)s” by %(agent)s failed.", title=notice.task_title, agent=agent)
    lines = [f"<b>✖ {_e(failed)}</b>"]
    if notice.error:
        lines.append(_e(_("Reason: %(error)s", error=notice.error)))
    lines.append(f'<a href="{_e(task_url)}">{_e(_("Open the task"))}</a>')
    return "\n".join(lines)


def recipient_chat(recipient: Recipient) -> int:
    return int(recipient.address or 0)
