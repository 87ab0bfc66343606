"""Modals: where a Slack message takes typed answers and edits.

An input card's text, the comment a review's "request changes" asks for, and the edited
fields of a card's action are typed into a modal (``views.open``), never into the chat, so a
sensitive answer does not stay in the conversation's history. The modal's submission
(``view_submission``) is answered in place: an answer that does not fit is shown on the
field that must change (``response_action: errors``) and nothing is decided; a high-risk
edited approval asks once more, showing what was changed (``response_action: update``).

``private_metadata`` carries only the opaque id of the message's ``DeliveredCard`` row and
the option the modal answers with; everything else is checked again on the server.
"""

from __future__ import annotations

import json
from typing import Any

from hub.channels.action_view import FIELD_PREFIX, ActionField, ActionView
from hub.channels.cards import Card
from hub.channels.slack.actions import ModalKind
from hub.channels.slack.blocks import MAX_TEXT, Block, DoesNotFit, plain
from hub.i18n import gettext as _
from hub.protocol.interactions import declines

ANSWER_BLOCK = "answer"
TEXT_ACTION = "text"
FIELD_BLOCK = "field:"  # + the field's name (at most 100 characters; a block id holds 255)
MAX_TITLE = 24  # a modal's title, submit and close labels


def _label(text: str) -> dict[str, Any]:
    return plain(text if len(text) <= MAX_TITLE else text[: MAX_TITLE - 1] + "…")


def _view(
    kind: ModalKind, metadata: dict[str, Any], title: str, submit: str, blocks: list[Block]
) -> Block:
    return {
        "type": "modal",
        "callback_id": str(kind),
        "private_metadata": json.dumps(metadata, separators=(",", ":")),
        "title": _label(title),
        "submit": _label(submit),
        "close": _label(_("Cancel")),
        "blocks": blocks,
    }


def _about(card: Card) -> Block:
    return {"type": "section", "text": plain(card.title)}


def input_modal(card: Card, short_id: str) -> Block:
    """The modal an input card's "Answer…" opens."""
    spec = card.input
    element: Block = {
        "type": "plain_text_input",
        "action_id": TEXT_ACTION,
        "multiline": bool(spec and spec.max_length > 150),
        "max_length": min(spec.max_length if spec else MAX_TEXT, MAX_TEXT),
    }
    if spec and spec.placeholder:
        element["placeholder"] = plain(spec.placeholder[:150])
    blocks = [_about(card)]
    if card.why:
        blocks.append({"type": "context", "elements": [plain(card.why[:MAX_TEXT])]})
    blocks.append(
        {
            "type": "input",
            "block_id": ANSWER_BLOCK,
            "label": plain(_("Your answer")),
            "element": element,
        }
    )
    return _view(ModalKind.INPUT, {"card": short_id}, _("Answer"), _("Send"), blocks)


def comment_modal(card: Card, short_id: str, option_id: str) -> Block:
    """The modal a review's "request changes" opens: what should change."""
    blocks = [
        _about(card),
        {
            "type": "input",
            "block_id": ANSWER_BLOCK,
            "label": plain(_("What should change?")),
            "element": {"type": "plain_text_input", "action_id": TEXT_ACTION, "multiline": True},
        },
    ]
    metadata = {"card": short_id, "option": option_id}
    return _view(ModalKind.COMMENT, metadata, _("Request changes"), _("Send"), blocks)


def approving_option(card: Card) -> str:
    """The option an edited action is approved with."""
    option = next((o for o in card.options if not declines(o.id, o.style)), None)
    return option.id if option else "approve"


def can_edit_here(action: ActionView) -> bool:
    """Whether every editable field fits a modal's text input."""
    return all(len(field.text) <= MAX_TEXT for field in action.editable)


def edit_modal(card: Card, short_id: str, option_id: str) -> Block:
    """The modal "Edit and approve…" opens: each editable field as a text input holding the
    value the agent proposed; the rest of the action shown as it stands."""
    action = card.action
    if action is None or not can_edit_here(action):
        raise DoesNotFit("the action's fields")
    blocks: list[Block] = [_about(card)]
    for field in action.fields:
        if not field.editable:
            blocks.append(
                {"type": "section", "text": plain(f"{field.name}:\n{field.text}"[:MAX_TEXT])}
            )
            continue
        blocks.append(
            {
                "type": "input",
                "block_id": f"{FIELD_BLOCK}{field.name}",
                "label": plain(field.name[:2000]),
                "element": {
                    "type": "plain_text_input",
                    "action_id": TEXT_ACTION,
                    "multiline": field.multiline,
                    "initial_value": field.text,
                },
            }
        )
    blocks.append(
        {
            "type": "context",
            "elements": [plain(_("Fingerprint %(short)s", short=action.fingerprint))],
        }
    )
    metadata = {"card": short_id, "option": option_id}
    return _view(ModalKind.EDIT, metadata, _("Edit and approve"), _("Approve"), blocks)


def confirm_edit_modal(
    card: Card, short_id: str, option_id: str, changed: list[ActionField]
) -> Block:
    """The second, deliberate step of a high-risk edited approval: what changed, and a
    submit button that says what it does."""
    blocks: list[Block] = [
        _about(card),
        {
            "type": "section",
            "text": plain(_("⛔ High risk: approve the action as edited?")),
        },
    ]
    for field in changed:
        blocks.append({"type": "section", "text": plain(f"{field.name}:\n{field.text}"[:MAX_TEXT])})
    if not changed:
        blocks.append({"type": "context", "elements": [plain(_("Nothing was changed."))]})
    metadata = {"card": short_id, "option": option_id}
    return _view(ModalKind.EDIT_CONFIRM, metadata, _("Confirm"), _("Yes, approve"), blocks)


def metadata_of(view: dict[str, Any]) -> dict[str, Any]:
    try:
        metadata = json.loads(view.get("private_metadata") or "{}")
    except ValueError:
        return {}
    return metadata if isinstance(metadata, dict) else {}


def typed_text(view: dict[str, Any]) -> str:
    """What was typed into the modal's one text input."""
    values = (view.get("state") or {}).get("values") or {}
    return str(((values.get(ANSWER_BLOCK) or {}).get(TEXT_ACTION) or {}).get("value") or "")


def typed_fields(view: dict[str, Any], action: ActionView) -> dict[str, str]:
    """The edit modal's inputs as a web form would send them: ``action.<field>`` → text."""
    values = (view.get("state") or {}).get("values") or {}
    form: dict[str, str] = {}
    for field in action.fields:
        typed = (values.get(f"{FIELD_BLOCK}{field.name}") or {}).get(TEXT_ACTION)
        if field.editable and typed is not None:
            form[FIELD_PREFIX + field.name] = str(typed.get("value") or "")
    return form


def field_block(action: ActionView, name: str | None) -> str:
    """The block to show a refused edit on: the field it names, else the first editable."""
    for field in action.fields:
        if field.editable and (name is None or field.name == name):
            return f"{FIELD_BLOCK}{field.name}"
    return ANSWER_BLOCK


def notice_modal(text: str) -> Block:
    """A modal that only says ``text`` (why nothing was decided), with nothing to submit."""
    return {
        "type": "modal",
        "callback_id": "lineup-notice",
        "title": _label(_("LineUp Hub")),
        "close": _label(_("Close")),
        "blocks": [{"type": "section", "text": plain((text or " ")[:MAX_TEXT])}],
    }
