"""What Slack's messages, modals and requests look like on the wire, for the local Slack
(``tests.channels.slack_peer``): a message as the Web API keeps it, a modal a person has
open, the form an interaction is posted as, and what Block Kit refuses."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode


@dataclass
class SlackMessage:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    metadata: dict[str, Any] | None = None
    thread_ts: str | None = None
    history: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def all_text(self) -> str:
        """Every text the message shows, one per line."""
        return "\n".join(texts_of(self.blocks))

    def controls(self) -> list[dict[str, Any]]:
        return [e for b in self.blocks if b.get("type") == "actions" for e in b["elements"]]

    def buttons(self) -> list[str]:
        return [e["text"]["text"] for e in self.controls() if e["type"] == "button"]

    def control(self, label: str) -> dict[str, Any]:
        for element in self.controls():
            text = (element.get("text") or {}).get("text", "")
            if element["type"] == "button" and label in text:
                return element
            if element["type"] == "checkboxes" and label == "checkboxes":
                return element
        raise AssertionError(f"no control {label!r} in {self.buttons()}")


@dataclass
class OpenView:
    id: str
    user: str
    view: dict[str, Any]
    closed: bool = False


def interactivity_body(payload: dict[str, Any]) -> bytes:
    """How Slack posts an interaction: form-encoded, the JSON as ``payload``."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def dm_channel(user: str) -> str:
    return "D" + user.removeprefix("U")


def form_value(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def blocks_of(raw: Any) -> list[dict[str, Any]]:
    if raw in (None, ""):
        return []
    return json.loads(raw) if isinstance(raw, str) else list(raw)


def texts_of(blocks: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for block in blocks:
        for key in ("text",):
            if isinstance(block.get(key), dict):
                found.append(block[key]["text"])
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("type") in ("plain_text", "mrkdwn"):
                found.append(element["text"])
    return found


def block_kit_problem(
    blocks: list[dict[str, Any]], params: dict[str, Any], *, modal: bool
) -> str | None:
    """What Slack would refuse in these blocks (the limits of its Block Kit reference)."""
    if not blocks and not params.get("text"):
        return "no text and no blocks"
    if len(blocks) > (100 if modal else 50):
        return f"{len(blocks)} blocks"
    action_ids: set[str] = set()
    for block in blocks:
        kind = block.get("type")
        text = block.get("text")
        if kind == "header" and (text["type"] != "plain_text" or len(text["text"]) > 150):
            return "header"
        if isinstance(text, dict) and len(text.get("text", "")) > 3000:
            return f"{kind} text over 3000"
        if isinstance(text, dict) and not text.get("text"):
            return f"{kind} with empty text"
        for element in block.get("elements") or []:
            if kind == "context":
                if len(block["elements"]) > 10:
                    return "context over 10 elements"
                continue
            if kind == "actions" and len(block["elements"]) > 25:
                return "actions over 25 elements"
            action_id = element.get("action_id", "")
            if not action_id or len(action_id) > 255 or action_id in action_ids:
                return f"action_id {action_id!r}"
            action_ids.add(action_id)
            if element.get("type") == "button":
                label = element["text"]
                if label["type"] != "plain_text" or not 0 < len(label["text"]) <= 75:
                    return f"button {label!r}"
                if len(element.get("value", "")) > 2000 or len(element.get("url", "")) > 3000:
                    return "button value or url"
            if element.get("type") == "checkboxes":
                if not 0 < len(element["options"]) <= 10:
                    return "checkboxes"
                if any(len(o["text"]["text"]) > 75 for o in element["options"]):
                    return "checkbox text"
    return None
