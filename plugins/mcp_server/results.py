"""What each tool returns, as the output schemas the tools publish.

A model reads a tool's ``outputSchema`` to know what comes back, so every property says what
it means. The shapes are TypedDicts: a key is present only when it applies (``optionIds``
only for a multiple choice, ``text`` only for an input), as the tools have always answered.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

Status = Literal["decided", "pending", "cancelled", "expired", "withdrawn"]


class Vote(TypedDict):
    """One approver's answer to a card that needed a quorum."""

    actor: Annotated[str, Field(description="Who voted: 'user:<id>'.")]
    optionId: Annotated[str, Field(description="The option they picked ('approve', ...).")]
    via: Annotated[str, Field(description="Where they answered: web, email, telegram, ...")]
    at: Annotated[str, Field(description="When they voted (ISO 8601, UTC).")]
    comment: NotRequired[Annotated[str, Field(description="What they wrote with the vote.")]]


class ExactAction(TypedDict):
    """The exact action decided on, as the person last saw or edited it."""

    kind: Annotated[str, Field(description="What kind of action, e.g. 'shell.command'.")]
    fields: Annotated[
        dict[str, Any], Field(description="The fields to act on: exactly these, nothing else.")
    ]


class Decision(TypedDict):
    """The outcome of asking a person: their answer, or why there is none (yet)."""

    status: Annotated[
        Status,
        Field(
            description="'decided': a person answered (act on it). 'pending': nobody has "
            "yet; call get_decision with the handle later. 'cancelled': the person cancelled "
            "the task, stop its work. 'expired': the card's time ran out with nothing "
            "decided. 'withdrawn': the question was answered elsewhere or taken back."
        ),
    ]
    handle: Annotated[
        str, Field(description="The request's handle (the card's id), for get_decision.")
    ]
    approved: NotRequired[
        Annotated[
            bool,
            Field(description="True only when the 'approve' option was picked: go ahead."),
        ]
    ]
    optionId: NotRequired[Annotated[str, Field(description="The option the person picked.")]]
    optionIds: NotRequired[
        Annotated[list[str], Field(description="The options picked, on a multiple choice.")]
    ]
    text: NotRequired[Annotated[str, Field(description="The value typed, on an input.")]]
    comment: NotRequired[
        Annotated[str, Field(description="What the person wrote with the answer.")]
    ]
    decidedBy: NotRequired[
        Annotated[str, Field(description="Who decided: 'user:<id>', or 'hub:policy'.")]
    ]
    via: NotRequired[
        Annotated[
            str,
            Field(
                description="Where the answer came from: web, email, telegram, notebook, "
                "terminal (this client's own prompt), policy (an expiry), ..."
            ),
        ]
    ]
    decidedAt: NotRequired[
        Annotated[str, Field(description="When it was decided (ISO 8601, UTC).")]
    ]
    votes: NotRequired[
        Annotated[
            list[Vote],
            Field(description="On a quorum card, every approver's vote, oldest first."),
        ]
    ]
    action: NotRequired[
        Annotated[
            ExactAction,
            Field(description="With exact_action: the approved action, perhaps edited."),
        ]
    ]
    actionHash: NotRequired[Annotated[str, Field(description="The hash of the approved action.")]]
    editedFrom: NotRequired[
        Annotated[
            str,
            Field(description="When the person edited the action: the hash of yours."),
        ]
    ]
    taskId: NotRequired[
        Annotated[str, Field(description="The task the request belongs to, when cancelled.")]
    ]
    reason: NotRequired[
        Annotated[str, Field(description="Why the request ended without an answer.")]
    ]
    waitedSeconds: NotRequired[
        Annotated[int, Field(description="How long this call waited before returning pending.")]
    ]
    next: NotRequired[Annotated[str, Field(description="What to do now, in a sentence.")]]


class BatchDecision(TypedDict):
    """The outcome of several approvals asked together."""

    status: Annotated[
        Literal["decided", "pending"],
        Field(
            description="'decided': every item has an outcome. 'pending': some have none "
            "yet; call get_decision with their handles later."
        ),
    ]
    items: Annotated[
        list[Decision],
        Field(description="One outcome per item, in the order they were asked."),
    ]


class TaskView(TypedDict):
    """A task this agent works on, as the hub shows it to the person."""

    taskId: Annotated[str, Field(description="The task's id, for the other task tools.")]
    title: Annotated[str, Field(description="The task's title.")]
    description: Annotated[str, Field(description="What the task is about.")]
    status: Annotated[
        str,
        Field(
            description="queued, running, waiting_for_human, succeeded, failed, cancelled "
            "(or unknown: named by you, not yet confirmed by the hub)."
        ),
    ]
    conversationId: Annotated[
        str | None, Field(description="The conversation the task belongs to, if any.")
    ]
    startedBy: Annotated[
        Literal["person", "agent", "unknown"],
        Field(description="'person': assigned in the hub; 'agent': you started it."),
    ]
    progress: Annotated[int | None, Field(description="The last percentage reported.")]
    summary: Annotated[str | None, Field(description="The last one-line summary reported.")]
    cancelRequested: Annotated[
        bool, Field(description="True once the person cancelled it: stop its work.")
    ]


class MessagePosted(TypedDict):
    """A message written to the person."""

    messageId: Annotated[str, Field(description="The message's id.")]
    conversationId: Annotated[str, Field(description="The conversation it was written to.")]


class ArtifactAdded(TypedDict):
    """A result attached for the person."""

    artifactId: Annotated[str, Field(description="The artifact's id.")]
    taskId: Annotated[str | None, Field(description="The task it is attached to, if any.")]
