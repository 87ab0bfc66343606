"""What each event of the log says, as a sentence in the reader's language.

"Builder reported 50 % — sorting", "Ada approved “Deploy”", "The task failed: disk full":
one sentence per event type a task's timeline or an agent's log holds, naming people and
agents by name (``hub.web.pages.names``) and cards and tasks by title. A type without
words here still reads as a sentence, never as its dotted name. Everything an agent wrote
(a summary, an error, a title) is quoted, cut to a line, as plain text: the templates
escape it like any other value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hub.protocol.interactions import declines
from hub.web.pages.i18n import gettext as _
from hub.web.pages.names import Names

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


def excerpt(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"


def sentence(envelope: Mapping[str, Any], context: Context) -> tuple[str, str]:
    """The event as a sentence, and the kind of line it makes."""
    kind = str(envelope.get("type", ""))
    payload: Mapping[str, Any] = envelope.get("payload") or {}
    who = context.names.actor(envelope.get("actor"), opening=True)
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
    "interaction.delivered": "answer",
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


def _delivered(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("The answer to “%(title)s” reached the agent", title=_card_title(p, c))


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


def _the_agent(who: str, p: Mapping[str, Any], c: Context, *, opening: bool) -> str:
    """The agent an agent event is about: named in its payload, else the one that sent it."""
    agent_id = p.get("agentId")
    return c.names.agent(str(agent_id), opening=opening) if agent_id else who


def _paired(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(agent)s was paired", agent=_the_agent(who, p, c, opening=True))


def _confirmed(who: str, p: Mapping[str, Any], c: Context) -> str:
    agent = _the_agent(who, p, c, opening=False)
    return _("%(who)s confirmed %(agent)s", who=who, agent=agent)


def _connected(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(agent)s connected", agent=_the_agent(who, p, c, opening=True))


def _online(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(agent)s came online", agent=_the_agent(who, p, c, opening=True))


def _offline(who: str, p: Mapping[str, Any], c: Context) -> str:
    return _("%(agent)s went offline", agent=_the_agent(who, p, c, opening=True))


def _revoked(who: str, p: Mapping[str, Any], c: Context) -> str:
    agent = _the_agent(who, p, c, opening=False)
    return _("%(who)s revoked %(agent)s", who=who, agent=agent)


def _remote_added(who: str, p: Mapping[str, Any], c: Context) -> str:
    agent = _the_agent(who, p, c, opening=False)
    return _("%(who)s added the remote agent %(agent)s", who=who, agent=agent)


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
    "interaction.delivered": _delivered,
    "interaction.reminded": _reminded,
    "interaction.escalated": _escalated,
    "agent.paired": _paired,
    "agent.confirmed": _confirmed,
    "agent.connected": _connected,
    "agent.online": _online,
    "agent.offline": _offline,
    "agent.revoked": _revoked,
    "agent.remote_added": _remote_added,
}
SPOKEN_TYPES = frozenset(_SENTENCES)
