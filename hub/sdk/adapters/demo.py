"""The simulated agent of spec §12.3 and §15 (``lineup agent demo``).

For each task it: accepts, reports progress twice, creates a child task, asks a high-risk
approval (why → impact → options → details) of the exact upgrade it proposes — the person
may edit the list of packages before approving —, waits for the decision however long it
takes (through disconnects and restarts), and only if approved applies exactly the approved
list, posts a result message and an artifact and succeeds. A rejection stops the task
cleanly as ``cancelled`` with who decided; a cancel request stops it wherever it is.

Every step goes through ``hub.sdk.Task``, whose ids are derived from the task and the step,
so a restarted demo that re-runs a task it had not finished re-sends steps the hub already
holds and the hub stores none of them twice.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable

from hub.protocol.actions import short_hash
from hub.sdk import Agent, ProposedAction, Task

logger = logging.getLogger(__name__)

Say = Callable[[str], None]

UPGRADE = ProposedAction(
    kind="packages.upgrade",
    fields={
        "environment": "production",
        "packages": ["httpx 0.27 → 0.28", "pydantic 2.9 → 2.10", "uvicorn 0.30 → 0.32"],
        "restart": "rolling",
    },
    editable=["packages"],
)


def install(agent: Agent, *, pause_s: float = 1.0, say: Say = print) -> None:
    """Make ``agent`` behave as the demo agent (registers its task handler)."""

    @agent.on_task
    async def simulate(task: Task) -> None:
        say(f"task {task.id}: {task.title!r}")
        await task.accept()
        await task.sleep(pause_s)
        await task.progress(25, "Scanning the project's dependency files")
        say("  progress 25%")
        await task.sleep(pause_s)
        await task.progress(50, "Drafting an upgrade plan")
        say("  progress 50%")
        plan = await task.create_child("Apply the upgrade plan", status="running")
        say(f"  child task {plan.id}")
        answer = await task.request_approval(
            "Apply the dependency upgrades to production?",
            description=(
                f"The plan for “{task.title}” is ready. Applying it changes what runs in "
                "production, so a person must decide."
            ),
            impact="3 packages are upgraded in production; services restart for about 1 minute.",
            risk="high",
            details={"rollback": "redeploy the previous release"},
            action=UPGRADE,
        )
        if not answer.approved:
            note = f" ({answer.comment})" if answer.comment else ""
            say(f"  rejected by {answer.responded_by} via {answer.via}{note}: stopping")
            await plan.report("cancelled", summary="Not applied: the upgrade was rejected.")
            await task.report(
                "cancelled",
                summary=f"Stopped: the upgrade was rejected via {answer.via}{note}.",
            )
            return
        # Only what the person approved is applied: an edited list, never a stale one.
        packages = answer.approved_action(UPGRADE)["packages"]
        edited = " (edited)" if answer.edited else ""
        say(f"  approved by {answer.responded_by} via {answer.via}{edited}: {packages}")
        await task.progress(80, "Applying the approved upgrades")
        await task.sleep(pause_s)
        await plan.succeed(f"{len(packages)} packages upgraded")
        # People read the result in the hub: the short fingerprint they compared on the card,
        # not the hash or the approver's id (the hub's pages show who decided, by name).
        result = (
            f"Done: “{task.title}”. Upgraded {', '.join(packages)} in production "
            f"(approved via {answer.via}{edited}; action {short_hash(answer.action_hash or '')})."
            " The plan is attached."
        )
        if task.conversation_id:
            await task.post_message(result)
        else:
            logger.info("task %s has no conversation: the result goes in its summary", task.id)
        await task.add_artifact(
            "upgrade-plan.md",
            _data_url(PLAN, "text/markdown"),
            mime_type="text/markdown",
            summary="The applied upgrade plan",
        )
        await task.succeed(result[:2000])
        say(f"task {task.id}: succeeded")

    @agent.on("task.cancel_requested")
    async def cancelled(event: object) -> None:
        say("  cancel requested")


PLAN = """# Upgrade plan

| package | from | to |
| --- | --- | --- |
| httpx | 0.27 | 0.28 |
| pydantic | 2.9 | 2.10 |
| uvicorn | 0.30 | 0.32 |

Rollback: redeploy the previous release.
"""


def _data_url(text: str, mime_type: str) -> str:
    return f"data:{mime_type};base64," + base64.b64encode(text.encode()).decode()
