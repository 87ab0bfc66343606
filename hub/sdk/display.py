"""Rich display of tasks, interactions and artifacts: HTML in Jupyter, plain text elsewhere.

Everything here works on the camelCase dicts the hub sends (the JSON API's task,
interaction and artifact shapes, and LAP payloads, which use the same names), needs only the
standard library, and is used by the SDK's own objects and by the notebook inbox alike.

Whatever an agent or a remote peer wrote is untrusted: every string is escaped before it
goes into HTML, and a link is only a link when it is http(s). Risk is said in words and an
icon, never by colour alone (spec §7.3).
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

RISK_WORDS = {"low": "ℹ️ Low risk", "medium": "⚠️ Medium risk", "high": "⛔ High risk"}
# As the hub's own surfaces name them (hub.channels.wording.via_text), in English.
VIA_WORDS = {
    "web": "the web",
    "api": "the API",
    "email": "email",
    "telegram": "Telegram",
    "feishu": "Feishu",
    "slack": "Slack",
    "notebook": "a notebook",
    "push": "a push notification",
    "policy": "the approval policy",
}
STATUS_WORDS = {
    "queued": "queued",
    "running": "running",
    "waiting_for_human": "waiting for a person",
    "succeeded": "succeeded",
    "failed": "failed",
    "cancelled": "cancelled",
}
_BOX = (
    "border:1px solid #8a8a8a;border-radius:6px;padding:8px 12px;margin:4px 0;"
    "font-family:system-ui,sans-serif;line-height:1.4"
)


def escape(value: object) -> str:
    """``value`` as inert HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def safe_url(url: object) -> str | None:
    """``url`` if it is an absolute http(s) URL, else None (no ``javascript:`` links)."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url.strip())
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def _text_block(value: object) -> str:
    """Multi-line agent text kept as written, escaped."""
    return f'<div style="white-space:pre-wrap">{escape(value)}</div>'


# --- tasks -------------------------------------------------------------------------------


def task_status_text(task: Mapping[str, Any]) -> str:
    status = str(task.get("status") or "queued")
    words = STATUS_WORDS.get(status, status)
    progress = task.get("progress")
    if isinstance(progress, int) and status in ("running", "waiting_for_human"):
        words = f"{words}, {progress}%"
    if task.get("cancelRequested") and status not in ("succeeded", "failed", "cancelled"):
        words = f"{words} (cancel requested)"
    return words


def task_text(task: Mapping[str, Any]) -> str:
    lines = [f"Task {task.get('title') or task.get('id')} — {task_status_text(task)}"]
    for label, key in (("Summary", "summary"), ("Error", "error")):
        if task.get(key):
            lines.append(f"  {label}: {task[key]}")
    for interaction in task.get("interactions") or ():
        lines.append("  " + interaction_text(interaction).replace("\n", "\n  "))
    for artifact in task.get("artifacts") or ():
        lines.append("  " + artifact_text(artifact))
    return "\n".join(lines)


def task_html(task: Mapping[str, Any]) -> str:
    parts = [
        f'<div class="lineup-task" style="{_BOX}">',
        f"<strong>{escape(task.get('title') or task.get('id'))}</strong> "
        f"<span>— {escape(task_status_text(task))}</span>",
    ]
    progress = task.get("progress")
    if isinstance(progress, int):
        parts.append(
            f'<div><progress max="100" value="{max(0, min(100, progress))}"></progress> '
            f"{progress}%</div>"
        )
    for label, key in (("Summary", "summary"), ("Error", "error")):
        if task.get(key):
            parts.append(f"<div><em>{label}:</em> {escape(task[key])}</div>")
    for interaction in task.get("interactions") or ():
        parts.append(interaction_html(interaction))
    artifacts = task.get("artifacts") or ()
    if artifacts:
        items = "".join(f"<li>{artifact_html(a)}</li>" for a in artifacts)
        parts.append(f"<div><em>Artifacts</em><ul>{items}</ul></div>")
    parts.append("</div>")
    return "".join(parts)


# --- interactions --------------------------------------------------------------------------


def card_of(interaction: Mapping[str, Any]) -> Mapping[str, Any]:
    """The card inside an interaction view (the API's shape), or the card itself."""
    card = interaction.get("card")
    return card if isinstance(card, Mapping) else interaction


def outcome_text(interaction: Mapping[str, Any]) -> str | None:
    """ "Approve — by Ada via a notebook, 2026-05-01 10:02 UTC"; None while pending."""
    status = str(interaction.get("status") or "pending")
    if status == "expired":
        return "This card expired; nothing was decided."
    if status == "cancelled":
        return _withdrawn_text(interaction.get("withdrawal"))
    if status != "resolved":
        return None
    card = card_of(interaction)
    response = interaction.get("response") or {}
    labels = {str(o.get("id")): str(o.get("label")) for o in card.get("options") or ()}
    picked = response.get("optionIds") or (
        [response["optionId"]] if response.get("optionId") else []
    )
    if picked:
        answer = ", ".join(labels.get(str(p), str(p)) for p in picked)
    elif (card.get("input") or {}).get("sensitive"):
        answer = "an answer (hidden: sensitive)"  # never repeated on screen (spec §11)
    elif isinstance(response.get("text"), str):
        answer = f"“{response['text']}”"
    else:
        answer = "answered"
    if response.get("comment"):
        answer = f"{answer} (“{response['comment']}”)"
    who = interaction.get("respondedByName") or str(interaction.get("respondedBy") or "")
    who = who.partition(":")[2] or who or "someone"
    via = interaction.get("via")
    when = _when(interaction.get("respondedAt"))
    return f"{answer} — by {who} via {VIA_WORDS.get(str(via), str(via))}" + (
        f", {when}" if when else ""
    )


def _withdrawn_text(withdrawal: object) -> str:
    """Why a cancelled card takes no answer: its agent took it back, or its task ended."""
    if not isinstance(withdrawal, Mapping):
        return "This card was withdrawn: its task ended."
    if withdrawal.get("reason") == "answered_in_terminal":
        sentence = "Answered in the terminal; this card takes no answer."
    else:
        sentence = "The agent withdrew this card; it takes no answer."
    note = withdrawal.get("note")
    return f"{sentence} “{note}”" if isinstance(note, str) and note else sentence


def _when(value: object) -> str:
    if not isinstance(value, str) or "T" not in value:
        return ""
    day, _, time = value.partition("T")
    return f"{day} {time[:5]} UTC"


def interaction_text(interaction: Mapping[str, Any]) -> str:
    card = card_of(interaction)
    kind = str(card.get("type") or interaction.get("type") or "card")
    lines = [f"[{kind}] {card.get('title', '')}"]
    if card.get("risk") in RISK_WORDS:
        lines.append(f"  {RISK_WORDS[str(card['risk'])]}")
    for label, key in (("Why", "description"), ("Impact", "impact")):
        if card.get(key):
            lines.append(f"  {label}: {card[key]}")
    outcome = outcome_text(interaction)
    if outcome:
        lines.append(f"  Outcome: {outcome}")
    else:
        options = " / ".join(str(o.get("label")) for o in card.get("options") or ())
        lines.append(f"  Waiting for an answer{': ' + options if options else ''}")
    return "\n".join(lines)


def interaction_html(interaction: Mapping[str, Any]) -> str:
    card = card_of(interaction)
    kind = str(card.get("type") or interaction.get("type") or "card")
    parts = [
        f'<div class="lineup-card" style="{_BOX}">',
        f"<div><small>{escape(kind)}</small></div>",
        f"<strong>{escape(card.get('title'))}</strong>",
    ]
    if card.get("risk") in RISK_WORDS:
        parts.append(f"<div><strong>{escape(RISK_WORDS[str(card['risk'])])}</strong></div>")
    for label, key in (("Why you are needed", "description"), ("Impact", "impact")):
        if card.get(key):
            parts.append(f"<div><em>{label}</em>{_text_block(card[key])}</div>")
    outcome = outcome_text(interaction)
    if outcome:
        parts.append(f"<div><strong>Outcome:</strong> {escape(outcome)}</div>")
    else:
        labels = ", ".join(escape(o.get("label")) for o in card.get("options") or ())
        parts.append(f"<div><em>Waiting for an answer</em>{': ' + labels if labels else ''}</div>")
    parts.append("</div>")
    return "".join(parts)


# --- artifacts -----------------------------------------------------------------------------


def artifact_text(artifact: Mapping[str, Any]) -> str:
    text = f"Artifact {artifact.get('name')}: {artifact.get('url')}"
    return text + (f" — {artifact['summary']}" if artifact.get("summary") else "")


def artifact_html(artifact: Mapping[str, Any]) -> str:
    name = escape(artifact.get("name"))
    url = safe_url(artifact.get("url"))
    link = (
        f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer">{name}</a>'
        if url
        else f"{name} <code>{escape(artifact.get('url'))}</code>"
    )
    kind = f" <small>({escape(artifact['mimeType'])})</small>" if artifact.get("mimeType") else ""
    summary = f" — {escape(artifact['summary'])}" if artifact.get("summary") else ""
    return f'<span class="lineup-artifact">{link}{kind}{summary}</span>'


# --- objects that display themselves -----------------------------------------------------


class _Displayed(Mapping[str, Any]):
    """The hub's JSON for an object, read like a dict, shown as HTML in Jupyter and as
    text in a terminal."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.data.get('id')!r})"

    def __str__(self) -> str:
        return self._text()

    def _repr_html_(self) -> str:
        return self._html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self._text(), "text/html": self._html()}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._text())

    def _text(self) -> str:
        raise NotImplementedError

    def _html(self) -> str:
        raise NotImplementedError


class TaskInfo(_Displayed):
    """A task as the hub shows it (with ``interactions`` and ``artifacts`` when known)."""

    def _text(self) -> str:
        return task_text(self.data)

    def _html(self) -> str:
        return task_html(self.data)


class InteractionInfo(_Displayed):
    """An interaction card with its status and, once decided, who decided what, how."""

    def _text(self) -> str:
        return interaction_text(self.data)

    def _html(self) -> str:
        return interaction_html(self.data)


class ArtifactInfo(_Displayed):
    def _text(self) -> str:
        return artifact_text(self.data)

    def _html(self) -> str:
        return artifact_html(self.data)


__all__ = [
    "ArtifactInfo",
    "InteractionInfo",
    "TaskInfo",
    "artifact_html",
    "artifact_text",
    "card_of",
    "escape",
    "interaction_html",
    "interaction_text",
    "outcome_text",
    "safe_url",
    "task_html",
    "task_text",
]
