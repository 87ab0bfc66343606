"""A task's history to read: its events as sentences (``hub.web.pages.sentences``), runs of
progress reports folded into the latest, grouped by the reader's day — and the raw events
kept for a developer's toggle, since the log is the truth and a sentence only tells it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hub.core.store.models import Interaction, Task
from hub.i18n import ngettext
from hub.web.pages.i18n import local_date
from hub.web.pages.names import workspace_names
from hub.web.pages.sentences import Context, sentence


@dataclass(frozen=True)
class Line:
    text: str
    kind: str  # what it is about, for its mark: step, progress, done, failed, card, answer…
    at: str
    count: int = 1  # how many events the line stands for

    @property
    def note(self) -> str:
        if self.count == 1:
            return ""
        return ngettext("%(num)d progress report", "%(num)d progress reports", self.count)


@dataclass(frozen=True)
class Day:
    label: str
    lines: list[Line]


@dataclass(frozen=True)
class RawEvent:
    sequence: int
    type: str
    actor: str
    at: str
    json: str


@dataclass(frozen=True)
class Timeline:
    days: list[Day]
    raw: list[RawEvent]

    def __bool__(self) -> bool:
        return bool(self.raw)


def _at(envelope: Mapping[str, Any]) -> str:
    return str(envelope.get("recordedAt") or envelope.get("occurredAt") or "")


def _is_progress(envelope: Mapping[str, Any]) -> bool:
    payload = envelope.get("payload") or {}
    return envelope.get("type") == "task.status_changed" and payload.get("status") == "running"


def lines(envelopes: Sequence[Mapping[str, Any]], context: Context) -> list[Line]:
    """One line per event, oldest first, a run of one agent's progress reports on one task
    folded into its latest report."""
    out: list[Line] = []
    previous: Mapping[str, Any] | None = None
    for envelope in envelopes:
        text, kind = sentence(envelope, context)
        if (
            previous is not None
            and _is_progress(envelope)
            and _is_progress(previous)
            and envelope.get("actor") == previous.get("actor")
            and (envelope.get("payload") or {}).get("taskId")
            == (previous.get("payload") or {}).get("taskId")
        ):
            out[-1] = Line(text, kind, _at(envelope), out[-1].count + 1)
        else:
            out.append(Line(text, kind, _at(envelope)))
        previous = envelope
    return out


def by_day(story: Iterable[Line]) -> list[Day]:
    days: list[Day] = []
    for line in story:
        label = local_date(line.at)
        if not days or days[-1].label != label:
            days.append(Day(label, []))
        days[-1].lines.append(line)
    return days


def raw_events(envelopes: Iterable[Mapping[str, Any]]) -> list[RawEvent]:
    return [
        RawEvent(
            sequence=int(e.get("sequence") or 0),
            type=str(e.get("type", "")),
            actor=str(e.get("actor", "")),
            at=_at(e),
            json=json.dumps(e, ensure_ascii=False, indent=2),
        )
        for e in envelopes
    ]


async def context_for(
    workspace_id: str, envelopes: Sequence[Mapping[str, Any]], *, subject: str | None = None
) -> Context:
    """The names, cards and task titles the events mention, read once."""
    payloads = [e.get("payload") or {} for e in envelopes]
    card_ids = {str(p["interactionId"]) for p in payloads if p.get("interactionId")}
    task_ids = {str(p["taskId"]) for p in payloads if p.get("taskId")}
    task_ids |= {str(e["taskId"]) for e in envelopes if e.get("taskId")}
    cards = (
        await Interaction.filter(workspace_id=workspace_id, id__in=list(card_ids)).values_list(
            "id", "payload"
        )
        if card_ids
        else []
    )
    tasks = (
        await Task.filter(workspace_id=workspace_id, id__in=list(task_ids)).values_list(
            "id", "title"
        )
        if task_ids
        else []
    )
    actors = {str(e.get("actor", "")) for e in envelopes}
    # The agents the lines name beside their actors: a task's target, a paired agent's.
    named_agents = {str(p[k]) for p in payloads for k in ("targetAgentId", "agentId") if p.get(k)}
    return Context(
        names=await workspace_names(workspace_id, actors, agent_ids=named_agents),
        cards={str(i): dict(p or {}) for i, p in cards},
        tasks={str(i): str(t) for i, t in tasks},
        subject=subject,
    )


async def task_timeline(
    workspace_id: str, envelopes: Sequence[Mapping[str, Any]], *, task_id: str
) -> Timeline:
    """The task's story, oldest first: it reads as what happened, in order."""
    context = await context_for(workspace_id, envelopes, subject=task_id)
    return Timeline(days=by_day(lines(envelopes, context)), raw=raw_events(envelopes))


async def agent_log(workspace_id: str, envelopes: Sequence[Mapping[str, Any]]) -> Timeline:
    """An agent's log, newest first as the agent's page lists it: what it did last on top."""
    context = await context_for(workspace_id, envelopes)
    story = [Line(*sentence(e, context), _at(e)) for e in envelopes]
    return Timeline(days=by_day(story), raw=raw_events(envelopes))
