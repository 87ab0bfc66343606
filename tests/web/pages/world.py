"""A workspace with something in it, made through the core as agents and people would.

Used by the page tests and the browser tests: an agent (paired and confirmed), a
conversation, a running task with progress, a child task, and one card of each kind.
Agent-supplied text can be swapped for hostile text to prove it stays inert.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import confirm_agent, redeem_pairing_code
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Agent, AgentStatus
from hub.core.work.conversations import create_conversation
from hub.core.work.messages import post_message

SECRET_KEY = "test-secret-key-" + "x" * 32  # what HubProcess and the page tests use

HOSTILE = (
    "<script>alert('x')</script><img src=x onerror=\"alert('img')\">"
    "[click](javascript:alert('md')) <a href=\"javascript:alert('a')\">link</a>"
    ' ![t](http://127.0.0.9/tracker.png) **bold** <iframe src="javascript:alert(1)"></iframe>'
)


@dataclass
class World:
    workspace_id: str
    agent: Agent
    conversation_id: str
    task_id: str
    cards: dict[str, str] = field(default_factory=dict)  # kind → interaction id


def card(kind: str, text: str) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": new_id("interaction"),
        "description": f"The plan is ready and needs your decision before it goes on. {text}",
        "impact": f"Runs 3 reviewed migrations on production; about 1 minute of downtime. {text}",
        "details": {"note": text, "environment": "production"},
    }
    if kind == "approval_high":
        return {
            **base,
            "type": "approval",
            "title": f"Run the production migration? {text}",
            "risk": "high",
            "options": [
                {"id": "approve", "label": "Run it", "style": "primary"},
                {"id": "reject", "label": "Do not run", "style": "danger"},
            ],
        }
    if kind == "approval_low":
        return {
            **base,
            "type": "approval",
            "title": f"Tidy the lock file? {text}",
            "risk": "low",
            "options": [
                {"id": "approve", "label": "Tidy it", "style": "primary"},
                {"id": "reject", "label": "Leave it", "style": "danger"},
            ],
        }
    if kind == "approval_action":
        return {
            **card("approval_high", text),
            "title": f"Run this migration? {text}",
            "action": {
                "kind": "db.migration",
                "fields": {
                    "database": f"prod-eu {text}",
                    "statements": ["ALTER TABLE users ADD plan text", text or "VACUUM users"],
                    "batchSize": 500,
                    "dryRun": False,
                },
                "editable": ["statements", "batchSize", "dryRun"],
            },
        }
    if kind == "choice":
        return {
            **base,
            "type": "choice",
            "title": f"Which region? {text}",
            "options": [
                {"id": "eu", "label": "Europe", "recommended": True},
                {"id": "us", "label": "United States"},
                {"id": "ap", "label": f"Asia {text}"[:200]},
            ],
        }
    if kind == "multi":
        return {
            **base,
            "type": "choice",
            "title": f"Which checks? {text}",
            "multiple": True,
            "options": [
                {"id": "lint", "label": "Lint"},
                {"id": "tests", "label": "Tests", "recommended": True},
                {"id": "types", "label": "Types"},
            ],
        }
    if kind == "input":
        return {
            **base,
            "type": "input",
            "title": f"Test environment URL? {text}",
            "input": {"format": "url", "placeholder": "https://staging.example.com"},
        }
    if kind == "review":
        return {
            **base,
            "type": "review",
            "title": f"Check the change plan {text}",
            "content": f"1. migrate\n2. deploy {text}",
            "contentUrl": "javascript:alert('review')",
        }
    raise ValueError(kind)


async def build_world(
    workspace_id: str,
    user_id: str,
    *,
    text: str = "",
    kinds: tuple[str, ...] = ("approval_high", "choice", "multi", "input", "review"),
    online: bool = True,
) -> World:
    code, _ = await create_pairing_code(workspace_id, secret_key=SECRET_KEY, ttl_s=600)
    agent, _credential = await redeem_pairing_code(
        code,
        name=f"builder {text}".strip()[:200],
        runtime="python",
        version="1.0",
        capabilities=["tasks", "approvals"],
        secret_key=SECRET_KEY,
    )
    agent = await confirm_agent(workspace_id, agent.id, agent.name, by=f"user:{user_id}")
    if online:
        await Agent.filter(id=agent.id).update(status=AgentStatus.ONLINE)
    by_user, by_agent = f"user:{user_id}", f"agent:{agent.id}"
    conversation = await create_conversation(
        workspace_id, f"Site rebuild {text}".strip(), [agent.id], by=by_user
    )
    posted = await post_message(
        workspace_id,
        conversation.id,
        "Tidy the dependencies and plan the migration",
        by=by_user,
        track_as_task=True,
    )
    assert posted.task is not None
    task_id = posted.task.id
    await append_event(workspace_id, "task.accepted", {"taskId": task_id}, actor=by_agent)
    await append_event(
        workspace_id,
        "task.status_changed",
        {"taskId": task_id, "status": "running", "progress": 60, "summary": f"Sorting {text}"},
        actor=by_agent,
    )
    await append_event(
        workspace_id,
        "message.created",
        {
            "messageId": new_id("message"),
            "conversationId": conversation.id,
            "content": f"Plan ready {text}",
            "attachments": [{"name": f"plan {text}", "url": "javascript:alert('att')"}],
        },
        actor=by_agent,
        conversation_id=conversation.id,
    )
    await append_event(
        workspace_id,
        "task.child_created",
        {
            "taskId": new_id("task"),
            "parentTaskId": task_id,
            "title": f"Scan the repository {text}",
            "status": "running",
        },
        actor=by_agent,
    )
    await append_event(
        workspace_id,
        "artifact.created",
        {
            "artifactId": new_id("artifact"),
            "taskId": task_id,
            "name": f"dependency-report {text}",
            "url": "javascript:alert('artifact')",
            "summary": text,
        },
        actor=by_agent,
        task_id=task_id,
    )
    world = World(workspace_id, agent, conversation.id, task_id)
    for kind in kinds:
        asked = card(kind, text)
        await append_event(
            workspace_id,
            "interaction.requested",
            {"taskId": task_id, "interaction": asked},
            actor=by_agent,
            task_id=task_id,
            conversation_id=conversation.id,
        )
        world.cards[kind] = asked["id"]
    return world
