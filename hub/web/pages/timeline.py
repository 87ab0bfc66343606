"""A task's history written as sentences: "Builder reported 50 % — sorting".

The log is the truth and stays one click away (the raw events behind a developer toggle),
but a person reads what happened, not event type names: each event of a task becomes a
sentence in the reader's language, naming people and agents by name (``hub.web.pages.names``)
and cards and tasks by title. Runs of progress reports fold into one line — the latest, with
how many it stands for — and lines are grouped by the reader's day.

Everything an agent wrote (a summary, an error, a title) is quoted as plain text; the
templates escape it like any other value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hub.core.store.models import Interaction, Task
from hub.i18n import ngettext
from hub.protocol.interactions import declines
from hub.web.pages.i18n import gettext as _
from hub.web.pages.i18n import local_date
from hub.web.pages.names import Names, workspace_names

Writer = Callable[[str, Mapping[str, Any], "Context"], str]  # (who, payload, context) → text

# Long agent text is cut in a line of the story; the whole of it is on the page elsewhere.
EXCERPT = 160


@dataclass(frozen=True)
class Context:
    """What a sentence names: people and agents, the cards and tasks the events are about."""

    names: Names = field(default_factory=Names)
    cards: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # id → card payload
    tasks: Mapping[str, str] = field(default_factory=dict)  # task id → title
    subject: str | None = None  # the task whose page this is: its events need no title


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


def excerpt(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def sentence(envelope: Mapping[str, Any], context: Context) -> tuple[str, str]:
    """The event as a sentence, and the kind of line it makes."""
    kind = str(envelope.get("type", ""))
    payload: Mapping[str, Any] = envelope.get("payload") or {}
    who = context.names.actor(envelope.get("actor"))
    writer = _SENTENCES.get(kind)
    if writer is None:
        return _("%(who)s recorded something the hub has no words for.", who=who), "step"
    text = writer(who, payload, context)
    task_id = payload.get("taskId") or envelope.get("taskId")
    if (
        kind not in ("task.child_created", "task.created")
        and context.subject
        and task_id
        and task_id != context.subject
    ):
        title = context.tasks.get(str(task_id)) or _("a child task")
        text = _("“%(title)s”: %(sentence)s", title=excerpt(title), sentence=text)
    return text, line_kind(kind, payload)


def line_kind(event_type: str, payload: Mapping[str, Any]) -> str:
    """What a line is about, for its mark: a step, progress, the end, a question, an answer…"""
    if event_type == "task.status_changed":
        return _STATUS_KINDS.get(str(payload.get("status")), "progress")
    return _KINDS.get(event_type, "step")


_STATUS_KINDS = {
    "succeeded": "done",
    "failed": "failed",
    "cancelled": "failed",
    "waiting_for_human": "card",
    "queued": "step",
}
_KINDS = {
    "message.created": "message",
    "artifact.created": "file",
    "interaction.requested": "card",
    "interaction.reminded": "card",
    "interaction.escalated": "card",
    "interaction.resolved": "answer",
    "interaction.voted": "answer",
    "interaction.expired": "failed",
}


def _task_created(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = excerpt(p.get("title"))
    if p.get("targetAgentId"):
        agent = c.names.agent(str(p["targetAgentId"]))
        return _("%(who)s asked %(agent)s: “%(title)s”", who=who, agent=agent, title=title)
    return _("%(who)s created the task “%(title)s”", who=who, title=title)


def _child_created(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = excerpt(p.get("title"))
    return _("%(who)s started a child task: “%(title)s”", who=who, title=title)


def _accepted(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(who)s took the task on", who=who)


def _status_changed(who: str, p: Mapping[str, Any], c: Context) -> str:
    status = p.get("status")
    summary = excerpt(p.get("summary"))
    if status == "succeeded":
        if summary:
            return _("%(who)s finished the task: %(summary)s", who=who, summary=summary)
        return _("%(who)s finished the task", who=who)
    if status == "failed":
        error = p.get("error") or p.get("reason")
        if error == "agent_unreachable":
            return _("The task failed: its agent could not be reached")
        if error:
            return _("The task failed: %(error)s", error=excerpt(error))
        return _("The task failed")
    if status == "cancelled":
        if summary:
            return _("The task was cancelled: %(summary)s", summary=summary)
        return _("The task was cancelled")
    if status == "waiting_for_human":
        return _("%(who)s is waiting for a person", who=who)
    if status == "queued":
        return _("The task is queued again")
    progress = p.get("progress")
    if progress is not None and summary:
        text = _(
            "%(who)s reported %(progress)s %% — %(summary)s",
            who=who,
            progress=progress,
            summary=summary,
        )
        return text
    if progress is not None:
        return _("%(who)s reported %(progress)s %%", who=who, progress=progress)
    if summary:
        return _("%(who)s reported: %(summary)s", who=who, summary=summary)
    return _("%(who)s is working on the task", who=who)


def _cancel_requested(who: str, p: Mapping[str, Any], c: Context) -> str:
    if p.get("reason"):
        reason = excerpt(p["reason"])
        return _("%(who)s asked the agent to stop: %(reason)s", who=who, reason=reason)
    return _("%(who)s asked the agent to stop", who=who)


def _message(who: str, p: Mapping[str, Any], c: Context) -> str:
    content = excerpt(p.get("content"))
    if not content:
        return _("%(who)s sent a message", who=who)
    return _("%(who)s wrote: “%(content)s”", who=who, content=content)


def _artifact(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(who)s attached “%(name)s”", who=who, name=excerpt(p.get("name")))


def _card_title(p: Mapping[str, Any], c: Context) -> str:
    card = p.get("interaction") or c.cards.get(str(p.get("interactionId") or "")) or {}
    return excerpt(card.get("title")) or _("a question")


def _requested(who: str, p: Mapping[str, Any], c: Context) -> str:
    card = p.get("interaction") or {}
    title = _card_title(p, c)
    if card.get("type") == "approval":
        return _("%(who)s asked for approval: “%(title)s”", who=who, title=title)
    return _("%(who)s asked: “%(title)s”", who=who, title=title)


def _option(p: Mapping[str, Any], c: Context, option_id: str) -> tuple[str, bool]:
    """An option's label, and whether it says no."""
    card = c.cards.get(str(p.get("interactionId") or "")) or {}
    option: Mapping[str, Any] = next(
        (o for o in card.get("options") or [] if o.get("id") == option_id), {}
    )
    label = excerpt(option.get("label")) or option_id
    return label, declines(option_id, option.get("style"))


def _resolved(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = _card_title(p, c)
    response: Mapping[str, Any] = p.get("response") or {}
    if p.get("reason") == "expired":
        if p.get("outcome") == "approve":
            return _("Nobody answered in time: “%(title)s” was approved", title=title)
        return _("Nobody answered in time: “%(title)s” was denied", title=title)
    option_id = response.get("optionId")
    if isinstance(option_id, str) and option_id:
        label, declining = _option(p, c, option_id)
        if option_id == "approve":
            return _("%(who)s approved “%(title)s”", who=who, title=title)
        if declining:
            return _("%(who)s said no to “%(title)s”: %(label)s", who=who, title=title, label=label)
        return _("%(who)s chose “%(label)s” for “%(title)s”", who=who, label=label, title=title)
    chosen = response.get("optionIds")
    if isinstance(chosen, list):
        labels = ", ".join(_option(p, c, str(o))[0] for o in chosen)
        return _("%(who)s chose %(labels)s for “%(title)s”", who=who, labels=labels, title=title)
    # A typed answer is not repeated here: it may be sensitive, and the card shows it.
    return _("%(who)s answered “%(title)s”", who=who, title=title)


def _voted(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = _card_title(p, c)
    option_id = str((p.get("response") or {}).get("optionId") or "")
    label, _declining = _option(p, c, option_id)
    return _("%(who)s voted “%(label)s” on “%(title)s”", who=who, label=label, title=title)


def _expired(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("“%(title)s” expired before anyone answered", title=_card_title(p, c))


def _withdrawn(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = _card_title(p, c)
    if p.get("reason") == "answered_in_terminal":
        return _(
            "%(who)s withdrew “%(title)s”: it was answered in the terminal", who=who, title=title
        )
    return _("%(who)s withdrew “%(title)s”", who=who, title=title)


def _reminded(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = _card_title(p, c)
    to = [str(u) for u in p.get("to") or []]
    if to:
        people = c.names.people_list(to)
        return _("%(people)s were reminded of “%(title)s”", people=people, title=title)
    return _("The approvers were reminded of “%(title)s”", title=title)


def _escalated(who: str, p: Mapping[str, Any], c: Context) -> str:
    title = _card_title(p, c)
    people = c.names.people_list(str(u) for u in p.get("escalateTo") or [])
    return _("“%(title)s” was escalated to %(people)s", title=title, people=people)


def _agent_event(kind: str) -> Writer:
    def write(who: str, p: Mapping[str, Any], c: Context) -> str:
        agent = c.names.agent(str(p.get("agentId") or "")) if p.get("agentId") else who
        texts = {
            "agent.paired": _("%(agent)s was paired", agent=agent),
            "agent.confirmed": _("%(who)s confirmed %(agent)s", who=who, agent=agent),
            "agent.connected": _("%(agent)s connected", agent=agent),
            "agent.online": _("%(agent)s came online", agent=agent),
            "agent.offline": _("%(agent)s went offline", agent=agent),
            "agent.revoked": _("%(who)s revoked %(agent)s", who=who, agent=agent),
            "agent.remote_added": _(
                "%(who)s added the remote agent %(agent)s", who=who, agent=agent
            ),
        }
        return texts[kind]

    return write


_SENTENCES: dict[str, Writer] = {
    "task.created": _task_created,
    "task.child_created": _child_created,
    "task.accepted": _accepted,
    "task.status_changed": _status_changed,
    "task.cancel_requested": _cancel_requested,
    "message.created": _message,
    "artifact.created": _artifact,
    "interaction.requested": _requested,
    "interaction.resolved": _resolved,
    "interaction.voted": _voted,
    "interaction.expired": _expired,
    "interaction.withdrawn": _withdrawn,
    "interaction.reminded": _reminded,
    "interaction.escalated": _escalated,
    **{
        kind: _agent_event(kind)
        for kind in (
            "agent.paired",
            "agent.confirmed",
            "agent.connected",
            "agent.online",
            "agent.offline",
            "agent.revoked",
            "agent.remote_added",
        )
    },
}
SPOKEN_TYPES = frozenset(_SENTENCES)


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
    return Context(
        names=await workspace_names(workspace_id, actors),
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
