"""Cards as Slack messages: Block Kit blocks whose agent text is ``plain_text``, never markup.

Everything an agent wrote (title, why, impact, options, content, the action's fields,
details) goes into ``plain_text`` objects, which Slack shows as typed: no formatting, no
links, no ``<!channel>`` or ``<@U…>`` that pings anyone. The hub's own headings are
``mrkdwn`` with ``&``, ``<`` and ``>`` escaped, and the message's top-level ``text`` (what a
notification shows) is escaped the same way. Links to the web card are URL buttons.

Block Kit has limits (a header's 150 characters, a button's 75, 50 blocks, 10 checkboxes,
3000 characters of text per object). A card that does not fit whole is not cut: its
message says so and links to the web card, like a review too long to show.

The controls' ``action_id`` is ``lineup:<card>:<action>[:<n>]``
(``hub.channels.slack.actions``). Everything here speaks the language in effect: the
channel sets it to the recipient's.
"""

from __future__ import annotations

from typing import Any

from hub.channels.action_view import ActionView
from hub.channels.base import Capabilities
from hub.channels.cards import Card, Notice
from hub.channels.slack.actions import CardAction, card_action_id
from hub.channels.wording import (
    agent_text,
    outcome_text,
    policy_lines,
    risk_text,
    voted_text,
    when,
)
from hub.i18n import gettext as _

Block = dict[str, Any]
REQUEST_CHANGES = "request_changes"
# Block Kit's limits (api.slack.com/reference/block-kit).
MAX_BLOCKS = 50
MAX_TEXT = 3000
MAX_HEADER = 150
MAX_BUTTON = 75
MAX_BUTTONS = 25
MAX_CHECKBOXES = 10
MAX_FALLBACK = 3000


class DoesNotFit(Exception):
    """The card cannot be shown whole in one message."""


def escape(text: str) -> str:
    """``text`` for a ``mrkdwn`` field: the three characters Slack reads as markup escaped,
    so ``<!channel>`` or ``<https://x|y>`` stay text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain(text: str) -> dict[str, Any]:
    """A ``plain_text`` object: shown as typed, ``:name:`` included (``emoji`` off: the hub's
    own words carry their emoji as characters)."""
    if len(text) > MAX_TEXT:
        raise DoesNotFit(f"{len(text)} characters in one text object")
    return {"type": "plain_text", "text": text or " ", "emoji": False}


def _section(text: str) -> Block:
    return {"type": "section", "text": plain(text)}


def _sections(text: str) -> list[Block]:
    """Text longer than one text object, whole, over as many sections as it takes: cut at
    the last line break before the limit where there is one."""
    parts = []
    while len(text) > MAX_TEXT:
        cut = text.rfind("\n", 0, MAX_TEXT)
        cut = cut if cut > 0 else MAX_TEXT
        parts.append(text[:cut])
        text = text[cut:].removeprefix("\n")
    return [_section(part) for part in [*parts, text]]


def _told(text: str) -> Block:
    """A sentence that informs and decides nothing (an outcome quoting a long answer): cut
    to fit rather than left out."""
    return _section(text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…")


def _heading(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": f"*{escape(text)}*"}}


def _context(*lines: str) -> Block:
    text = "\n".join(lines)
    text = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
    return {"type": "context", "elements": [plain(text)]}


def _button(
    label: str, action_id: str, *, style: str | None = None, url: str | None = None
) -> Block:
    if len(label) > MAX_BUTTON:
        raise DoesNotFit(f"a button label of {len(label)} characters")
    button: Block = {"type": "button", "text": plain(label), "action_id": action_id}
    if style:
        button["style"] = style
    if url:
        button["url"] = url
    return button


def _title(card: Card) -> Block:
    if len(card.title) <= MAX_HEADER:
        return {"type": "header", "text": plain(card.title)}
    return {"type": "section", "text": plain(card.title)}


def _about(card: Card) -> Block:
    about = agent_text(card)
    if card.task_title:
        about += f" · {_('Task')}: {card.task_title}"
    risk = risk_text(card)
    return _context(*(line for line in (about, risk) if line))


def fallback_text(card: Card) -> str:
    """The message's ``text``: what a notification or a screen reader says of it."""
    risk = risk_text(card)
    text = f"{card.title} — {risk}" if risk else card.title
    return escape(text[:MAX_FALLBACK])


def card_blocks(
    card: Card,
    short_id: str,
    state: dict[str, Any],
    capabilities: Capabilities,
    *,
    web_link: str | None = None,
) -> tuple[list[Block], bool]:
    """The message's blocks for the card as it now is, and whether it is shown natively
    (else it links to the web card: ``web_link`` is then needed).

    ``state`` is the message's own (``DeliveredCard.state``): whom it is for (``viewer``),
    a pending confirmation, the link to edit the action on the web."""
    head = [_title(card), _about(card)]
    policy = policy_lines(card)
    if not card.is_pending:
        blocks = [*head, _told(outcome_text(card) or "")]
        if policy:
            blocks.append(_context(*policy))
        if card.action:
            blocks.append(_context(_fingerprint(card.action)))
        return blocks, True
    voted = voted_text(card, str(state.get("viewer", "")))
    if voted:
        return [*head, *([_context(*policy)] if policy else []), _told(voted)], True
    if policy:
        head.append(_context(*policy))
    try:
        if not capabilities.can_render(card):
            raise DoesNotFit("the card's type or length")
        blocks = [*head, *_body(card), *_controls(card, short_id, state)]
        if len(blocks) > MAX_BLOCKS:
            raise DoesNotFit(f"{len(blocks)} blocks")
        return blocks, True
    except DoesNotFit:
        # Never a part of it to decide on: say so, and link to the whole card.
        too_long = _(
            "The content is too long to show here: open it on the web to read it and answer."
        )
        actions: list[Block] = []
        if web_link is not None:
            actions = [
                {
                    "type": "actions",
                    "elements": [
                        _button(
                            _("Open the card on the web"),
                            card_action_id(short_id, CardAction.WEB),
                            url=web_link,
                        )
                    ],
                }
            ]
        return [*head, _section(too_long), *actions], False


def _body(card: Card) -> list[Block]:
    blocks: list[Block] = []
    for heading, value in ((_("Why you are needed"), card.why), (_("Impact"), card.impact)):
        if value:
            blocks += [_heading(heading), *_sections(value)]
    if card.action:
        blocks += _action_blocks(card.action)
    if card.content:
        blocks += [_heading(_("What to review")), _section(card.content)]
    if card.content_url:
        blocks.append(_section(card.content_url))
    hints = []
    if card.multiple:
        hints.append(_("Tick the options, then Submit."))
    if card.expires_at:
        hints.append(_("Answer before %(when)s.", when=when(card.expires_at)))
    if hints:
        blocks.append(_context(*hints))
    if card.details:
        pairs = "\n".join(f"{k}: {v}" for k, v in card.details.items())
        blocks += [_heading(_("Details")), {"type": "context", "elements": [plain(pairs)]}]
    return blocks


def _action_blocks(action: ActionView) -> list[Block]:
    """The exact action, every field as the agent sent it."""
    blocks = [_heading(_("Exact action") + ": " + action.kind)]
    for field in action.fields:
        name = f"{field.name} ({_('editable')})" if field.editable else field.name
        blocks += _sections(f"{name}:\n{field.text}")
    blocks.append(_context(_fingerprint(action)))
    return blocks


def _fingerprint(action: ActionView) -> str:
    shown = _("Fingerprint %(short)s", short=action.fingerprint)
    if action.edited_from_fingerprint:
        shown += " · " + _("edited from %(short)s", short=action.edited_from_fingerprint)
    return shown


def _controls(card: Card, short_id: str, state: dict[str, Any]) -> list[Block]:
    if card.takes_text:
        answer = _button(_("Answer…"), card_action_id(short_id, CardAction.ANSWER), style="primary")
        return [{"type": "actions", "elements": [answer]}]
    confirm = state.get("confirm")
    if isinstance(confirm, int) and 0 <= confirm < len(card.options):
        return [_confirming(card, short_id, confirm)]
    if card.multiple:
        return _ticks(card, short_id, set(state.get("ticked") or []))
    return [_options(card, short_id, state)]


def _confirming(card: Card, short_id: str, index: int) -> Block:
    yes = _("⛔ Yes: %(label)s", label=card.options[index].label)
    return {
        "type": "actions",
        "elements": [
            _button(yes, card_action_id(short_id, CardAction.CONFIRM, index), style="danger"),
            _button(_("Cancel"), card_action_id(short_id, CardAction.CANCEL)),
        ],
    }


def _ticks(card: Card, short_id: str, ticked: set[int]) -> list[Block]:
    if len(card.options) > MAX_CHECKBOXES:
        raise DoesNotFit(f"{len(card.options)} options to tick")
    options = [{"text": _option_text(o.label), "value": str(i)} for i, o in enumerate(card.options)]
    checkboxes: Block = {
        "type": "checkboxes",
        "action_id": card_action_id(short_id, CardAction.TICK),
        "options": options,
    }
    chosen = [options[i] for i in sorted(ticked) if 0 <= i < len(options)]
    if chosen:
        checkboxes["initial_options"] = chosen
    submit = _button(_("Submit"), card_action_id(short_id, CardAction.SUBMIT), style="primary")
    return [
        {"type": "actions", "block_id": "ticks", "elements": [checkboxes]},
        {"type": "actions", "elements": [submit]},
    ]


def _option_text(label: str) -> dict[str, Any]:
    if len(label) > MAX_BUTTON:
        raise DoesNotFit(f"an option of {len(label)} characters")
    return plain(label)


def _options(card: Card, short_id: str, state: dict[str, Any]) -> Block:
    if len(card.options) > MAX_BUTTONS - 1:
        raise DoesNotFit(f"{len(card.options)} options")
    elements = []
    for index, option in enumerate(card.options):
        style = None
        if option.style == "primary" or option.recommended:
            style = "primary"
        elif option.style == "danger":
            style = "danger"
        action_id = card_action_id(short_id, CardAction.PICK, index)
        elements.append(_button(option.label, action_id, style=style))
    if card.action is not None and card.action.editable:
        edit_link = state.get("editLink")
        if edit_link:  # a field too long for a modal: the web's form edits it
            label, action = _("Edit and approve on the web"), CardAction.WEB
        else:
            label, action = _("Edit and approve…"), CardAction.EDIT
        elements.append(_button(label, card_action_id(short_id, action), url=edit_link))
    return {"type": "actions", "elements": elements}


def notice_blocks(notice: Notice, task_url: str) -> tuple[str, list[Block]]:
    agent = notice.agent_name or _("An agent")
    failed = _("The task “%(title)s” by %(agent)s failed.", title=notice.task_title, agent=agent)
    blocks: list[Block] = [_section("✖ " + failed)]
    if notice.error:
        blocks.append(_section(_("Reason: %(error)s", error=notice.error)))
    open_task = _button(_("Open the task"), "lineup-notice:open", url=task_url)
    blocks.append({"type": "actions", "elements": [open_task]})
    return escape(failed[:MAX_FALLBACK]), blocks
