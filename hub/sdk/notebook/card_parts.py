"""The parts of a card widget that are plain HTML or plain values: its header, its exact
action, its quorum's votes, its details, and an editable field's text both ways.

Everything an agent wrote is escaped here before it reaches an HTML widget.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from hub.protocol.actions import action_hash, short_hash, value_type
from hub.sdk.display import RISK_WORDS, VIA_WORDS, card_of, escape, safe_url
from hub.sdk.notebook.requirements import widgets


def edit_type(value: Any) -> str | None:
    """The kind of value an editable field holds (``hub.protocol.actions.value_type``)."""
    return value_type(value)


def edit_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "\n".join(str(item) for item in value)
    return str(value)


def parse_edit(kind: str | None, raw: str) -> Any:
    """A typed field back in the type the action holds; text that does not parse goes as
    typed, and the hub's refusal names the field and the type it must keep."""
    if kind == "list of text":
        return [line for line in raw.replace("\r\n", "\n").split("\n") if line.strip()]
    if kind == "boolean":
        return {"true": True, "false": False}.get(raw.strip().lower(), raw)
    if kind == "number":
        try:
            return int(raw.strip())
        except ValueError:
            pass
        try:
            number = float(raw.strip())
        except ValueError:
            return raw
        return number if math.isfinite(number) else raw
    return raw


def votes_html(view: Mapping[str, Any]) -> str:
    """A quorum card's policy and votes so far, as on every other surface; "" otherwise."""
    policy = view.get("policy")
    if not isinstance(policy, Mapping) or policy.get("mode") != "quorum":
        return ""
    card = card_of(view)
    options = [o for o in card.get("options") or () if isinstance(o, Mapping)]
    labels = {str(o.get("id")): str(o.get("label")) for o in options}
    approving = next(
        (str(o.get("id")) for o in options if o.get("id") == "approve"),
        next(
            (str(o.get("id")) for o in options if o.get("style") == "primary"),
            str(options[0].get("id")) if options else "",
        ),
    )
    votes = [v for v in view.get("votes") or () if isinstance(v, Mapping)]
    required = int(policy.get("required") or 1)
    approvals = sum(1 for v in votes if v.get("optionId") == approving)
    given = view.get("voterNames")
    names: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    approvers = policy.get("approvers") or ()
    if approvers:
        needs = f"Needs {required} of {len(approvers)} approvals."
    else:
        needs = f"Needs {required} approvals."
    lines = [f"👥 {escape(needs)}"]
    if str(view.get("status") or "pending") == "pending":
        lines.append(f"<strong>{approvals} of {required} approvals so far.</strong>")
    for vote in votes:
        actor = str(vote.get("actor") or "")
        who = str(names.get(actor) or actor.partition(":")[2] or "someone")
        label = labels.get(str(vote.get("optionId")), str(vote.get("optionId")))
        via = VIA_WORDS.get(str(vote.get("via")), str(vote.get("via")))
        lines.append(f"· {escape(who)}: {escape(label)} (via {escape(via)})")
    return "<div>" + "<br>".join(lines) + "</div>"


def header_html(view: Mapping[str, Any]) -> str:
    card = card_of(view)
    kind = escape(card.get("type") or view.get("type") or "")
    lines = [f"<div><small>{kind}</small></div>", f"<strong>{escape(card.get('title'))}</strong>"]
    agent = (view.get("agent") or {}).get("name") if isinstance(view.get("agent"), dict) else None
    task = (view.get("task") or {}).get("title") if isinstance(view.get("task"), dict) else None
    if agent or task:
        asked = f"{escape(agent or 'An agent')} asks" + (f" · task {escape(task)}" if task else "")
        lines.append(f"<div><small>{asked}</small></div>")
    if card.get("risk") in RISK_WORDS:
        lines.append(f"<div><strong>{escape(RISK_WORDS[str(card['risk'])])}</strong></div>")
    for label, key in (("Why you are needed", "description"), ("Impact", "impact")):
        if card.get(key):
            lines.append(
                f'<div><em>{label}</em><div style="white-space:pre-wrap">'
                f"{escape(card[key])}</div></div>"
            )
    if card.get("content"):
        lines.append(
            '<div><em>What to review</em><pre style="white-space:pre-wrap;max-height:20em;'
            f'overflow:auto">{escape(card["content"])}</pre></div>'
        )
    url = safe_url(card.get("contentUrl"))
    if url:
        lines.append(
            f'<div><a href="{escape(url)}" target="_blank" rel="noopener noreferrer">'
            f"{escape(url)}</a></div>"
        )
    if card.get("expiresAt"):
        lines.append(f"<div><small>Answer before {escape(card['expiresAt'])}.</small></div>")
    return "".join(lines)


def action_html(action: Mapping[str, Any], web_url: str | None = None) -> str:
    """The exact action as proposed (its editable fields follow as widgets); the web's form
    behind ``web_url`` edits it too."""
    rows = "".join(
        f'<dt><b>{escape(str(name))}</b></dt><dd><pre style="white-space:pre-wrap;margin:0">'
        f"{escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))}"
        "</pre></dd>"
        for name, value in action["fields"].items()
    )
    fingerprint = short_hash(action_hash(action["kind"], action["fields"]))
    edit = ""
    url = safe_url(web_url)
    if action.get("editable") and url:
        edit = (
            f'<p><a href="{escape(url)}" target="_blank" rel="noopener noreferrer">'
            "Edit and approve on the web</a></p>"
        )
    return (
        f"<p><b>Exact action</b>: <code>{escape(str(action['kind']))}</code> "
        f"<i>(fingerprint {fingerprint})</i></p><dl>{rows}</dl>{edit}"
    )


def details(card: Mapping[str, Any]) -> Any:
    """The card's details as a folded section; None when it has none."""
    facts = card.get("details")
    if not facts:
        return None
    text = json.dumps(facts, indent=2, ensure_ascii=False, default=str)
    body = widgets.HTML(value=f'<pre style="white-space:pre-wrap">{escape(text)}</pre>')
    return widgets.Accordion(children=[body], titles=("Details",), selected_index=None)


__all__ = [
    "action_html",
    "details",
    "edit_text",
    "edit_type",
    "header_html",
    "parse_edit",
    "votes_html",
]
