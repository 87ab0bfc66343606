"""Every event a task's timeline or an agent's log can hold, as the sentence a person reads."""

from __future__ import annotations

from typing import Any

import pytest

from hub.core.agents.lifecycle import AGENT_EVENT_TYPES
from hub.core.approvals.policies import POLICY_ACTOR
from hub.core.work.projection import handlers as work_handlers
from hub.i18n import speaking
from hub.web.pages.names import Names
from hub.web.pages.sentences import SPOKEN_TYPES, Context, sentence
from hub.web.pages.timeline import lines

ADA, BO, BUILDER = "usr_01ADA", "usr_01BO", "agt_01BUILDER"
TASK, CHILD, CARD = "task_01T", "task_01C", "int_01C"
CONTEXT = Context(
    names=Names(people={ADA: "Ada", BO: "Bo"}, agents={BUILDER: "Builder"}),
    cards={
        CARD: {
            "title": "Deploy",
            "options": [
                {"id": "approve", "label": "Ship it"},
                {"id": "reject", "label": "Hold", "style": "danger"},
                {"id": "eu", "label": "Europe"},
                {"id": "us", "label": "United States"},
            ],
        }
    },
    tasks={TASK: "Upgrade", CHILD: "Scan the repository"},
    subject=TASK,
)
AGENT, PERSON = f"agent:{BUILDER}", f"user:{ADA}"

# (type, actor, payload, the sentence): at least one case of every type spoken.
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "task.created",
        PERSON,
        {"taskId": TASK, "title": "Upgrade", "targetAgentId": BUILDER},
        "Ada asked Builder: “Upgrade”",
    ),
    (
        "task.created",
        PERSON,
        {"taskId": TASK, "title": "Upgrade"},
        "Ada created the task “Upgrade”",
    ),
    (
        "task.child_created",
        AGENT,
        {"taskId": CHILD, "parentTaskId": TASK, "title": "Scan the repository"},
        "Builder started a child task: “Scan the repository”",
    ),
    ("task.accepted", AGENT, {"taskId": TASK}, "Builder took the task on"),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "running", "progress": 50, "summary": "sorting"},
        "Builder reported 50 % — sorting",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "running", "progress": 5},
        "Builder reported 5 %",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "running", "summary": "reading"},
        "Builder reported: reading",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "running"},
        "Builder is working on the task",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "succeeded", "summary": "3 packages upgraded"},
        "Builder finished the task: 3 packages upgraded",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "failed", "error": "disk full"},
        "The task failed: disk full",
    ),
    (
        "task.status_changed",
        "system",
        {"taskId": TASK, "status": "failed", "error": "agent_unreachable"},
        "The task failed: its agent could not be reached",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "cancelled"},
        "The task was cancelled",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": TASK, "status": "waiting_for_human"},
        "Builder is waiting for a person",
    ),
    (
        "task.status_changed",
        AGENT,
        {"taskId": CHILD, "status": "succeeded"},
        "“Scan the repository”: Builder finished the task",
    ),
    (
        "task.cancel_requested",
        PERSON,
        {"taskId": TASK, "reason": "not needed"},
        "Ada asked the agent to stop: not needed",
    ),
    ("task.cancel_requested", PERSON, {"taskId": TASK}, "Ada asked the agent to stop"),
    (
        "message.created",
        AGENT,
        {"messageId": "msg_1", "content": "Plan\n  ready"},
        "Builder wrote: “Plan ready”",
    ),
    (
        "artifact.created",
        AGENT,
        {"taskId": TASK, "name": "plan.md", "url": "https://x.test/p"},
        "Builder attached “plan.md”",
    ),
    (
        "interaction.requested",
        AGENT,
        {"taskId": TASK, "interaction": {"id": CARD, "type": "approval", "title": "Deploy"}},
        "Builder asked for approval: “Deploy”",
    ),
    (
        "interaction.requested",
        AGENT,
        {"taskId": TASK, "interaction": {"id": CARD, "type": "input", "title": "Which URL?"}},
        "Builder asked: “Which URL?”",
    ),
    (
        "interaction.resolved",
        PERSON,
        {"interactionId": CARD, "response": {"optionId": "approve"}, "respondedBy": PERSON},
        "Ada approved “Deploy”",
    ),
    (
        "interaction.resolved",
        PERSON,
        {"interactionId": CARD, "response": {"optionId": "reject"}, "respondedBy": PERSON},
        "Ada said no to “Deploy”: Hold",
    ),
    (
        "interaction.resolved",
        PERSON,
        {"interactionId": CARD, "response": {"optionId": "eu"}},
        "Ada chose “Europe” for “Deploy”",
    ),
    (
        "interaction.resolved",
        PERSON,
        {"interactionId": CARD, "response": {"optionIds": ["eu", "us"]}},
        "Ada chose Europe, United States for “Deploy”",
    ),
    (
        "interaction.resolved",
        PERSON,
        {"interactionId": CARD, "response": {"text": "hunter2"}},
        "Ada answered “Deploy”",
    ),
    (
        "interaction.resolved",
        POLICY_ACTOR,
        {"interactionId": CARD, "response": {"optionId": "reject"}, "reason": "expired"},
        "Nobody answered in time: “Deploy” was denied",
    ),
    (
        "interaction.voted",
        f"user:{BO}",
        {"interactionId": CARD, "response": {"optionId": "approve"}},
        "Bo voted “Ship it” on “Deploy”",
    ),
    (
        "interaction.expired",
        POLICY_ACTOR,
        {"interactionId": CARD, "reason": "expired"},
        "“Deploy” expired before anyone answered",
    ),
    (
        "interaction.withdrawn",
        AGENT,
        {"interactionId": CARD, "reason": "answered_in_terminal", "note": ""},
        "Builder withdrew “Deploy”: it was answered in the terminal",
    ),
    (
        "interaction.withdrawn",
        AGENT,
        {"interactionId": CARD, "reason": "no_longer_needed"},
        "Builder withdrew “Deploy”",
    ),
    (
        "interaction.delivered",
        "system",
        {"interactionId": CARD, "sequence": 12},
        "The answer to “Deploy” reached the agent",
    ),
    (
        "interaction.reminded",
        POLICY_ACTOR,
        {"interactionId": CARD, "to": [ADA, BO]},
        "Ada, Bo were reminded of “Deploy”",
    ),
    (
        "interaction.escalated",
        POLICY_ACTOR,
        {"interactionId": CARD, "escalateTo": [BO]},
        "“Deploy” was escalated to Bo",
    ),
    ("agent.paired", AGENT, {"agentId": BUILDER}, "Builder was paired"),
    ("agent.remote_added", PERSON, {"agentId": BUILDER}, "Ada added the remote agent Builder"),
    ("agent.confirmed", PERSON, {"agentId": BUILDER}, "Ada confirmed Builder"),
    ("agent.connected", AGENT, {"agentId": BUILDER}, "Builder connected"),
    ("agent.online", AGENT, {"agentId": BUILDER}, "Builder came online"),
    ("agent.offline", "system", {"agentId": BUILDER}, "Builder went offline"),
    ("agent.revoked", PERSON, {"agentId": BUILDER}, "Ada revoked Builder"),
]


def envelope(type: str, actor: str, payload: dict[str, Any], sequence: int = 1) -> dict[str, Any]:
    return {
        "sequence": sequence,
        "type": type,
        "actor": actor,
        "payload": payload,
        "recordedAt": "2026-12-02T10:00:00Z",
    }


def test_every_event_a_task_or_an_agent_logs_has_words() -> None:
    # The types a task's events can have: all the work projection applies, but a
    # conversation's creation, which no task holds; and the agents' lifecycle.
    timeline_types = (work_handlers.types - {"conversation.created"}) | AGENT_EVENT_TYPES
    assert timeline_types <= SPOKEN_TYPES
    assert {type for type, *_rest in CASES} == SPOKEN_TYPES


@pytest.mark.parametrize(("type", "actor", "payload", "expected"), CASES)
def test_the_sentence_of_each_event(
    type: str, actor: str, payload: dict[str, Any], expected: str
) -> None:
    assert sentence(envelope(type, actor, payload), CONTEXT)[0] == expected


def test_unknown_people_and_agents_are_someone_and_an_agent_never_their_id() -> None:
    who = envelope("task.accepted", "agent:agt_GONE", {"taskId": TASK})
    assert sentence(who, CONTEXT)[0] == "An agent took the task on"
    asked = envelope("task.created", "user:usr_GONE", {"title": "x", "targetAgentId": "agt_X"})
    assert sentence(asked, CONTEXT)[0] == "Someone asked an agent: “x”"
    odd = envelope("something.new", "token:tok_1", {"taskId": TASK})
    text = sentence(odd, CONTEXT)[0]
    assert "something.new" not in text and "tok_1" not in text


def test_agent_text_is_quoted_cut_to_a_line_and_left_as_text() -> None:
    long = "<b>bold</b> " + "word " * 100
    text = sentence(
        envelope(
            "task.status_changed", AGENT, {"taskId": TASK, "status": "running", "summary": long}
        ),
        CONTEXT,
    )[0]
    assert text.startswith("Builder reported: <b>bold</b> word") and text.endswith("…")
    assert len(text) < 200


def test_a_run_of_progress_reports_folds_into_its_latest() -> None:
    report = [
        envelope(
            "task.status_changed", AGENT, {"taskId": TASK, "status": "running", "progress": p}, n
        )
        for n, p in enumerate((10, 20, 30), start=1)
    ]
    other = envelope("task.status_changed", AGENT, {"taskId": CHILD, "status": "running"}, 4)
    done = envelope("task.status_changed", AGENT, {"taskId": TASK, "status": "succeeded"}, 5)
    story = lines([*report, other, done], CONTEXT)
    assert [(line.text, line.count) for line in story] == [
        ("Builder reported 30 %", 3),
        ("“Scan the repository”: Builder is working on the task", 1),
        ("Builder finished the task", 1),
    ]
    assert story[0].note == "3 progress reports" and story[1].note == ""
    assert [line.kind for line in story] == ["progress", "progress", "done"]


def test_the_sentences_are_translated() -> None:
    with speaking("zh_Hans"):
        text = sentence(envelope(*CASES[4][:3]), CONTEXT)[0]
    assert text != CASES[4][3] and "Builder" in text and "50" in text and "sorting" in text
