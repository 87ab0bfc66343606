"""The inbox: waiting for me, needs attention, recently done — with counts."""

from __future__ import annotations

from datetime import timedelta

from hub.core.approvals.policy_clock import PolicyClock
from hub.core.store.models import AgentStatus, Workspace
from hub.core.work.inbox import inbox, waiting_count
from hub.core.work.interactions import respond_to_interaction
from hub.core.work.tasks import create_task
from hub.protocol.clock import utcnow
from hub.protocol.interactions import Risk
from tests.core.agent_reports import agent_asks, agent_reports, join, make_agent

ME = "user:usr_me"


async def test_an_empty_inbox(workspace: Workspace) -> None:
    box = await inbox(workspace.id)
    assert box["counts"] == {"waitingForMe": 0, "needsAttention": 0, "recentlyDone": 0}
    assert box["waitingForMe"] == box["needsAttention"] == box["recentlyDone"] == []


async def test_each_section_holds_what_it_should(make_user) -> None:  # type: ignore[no-untyped-def]
    _, workspace = await make_user()
    _, elsewhere = await make_user()
    await join(workspace.id, ME)
    agent, flaky = await make_agent(workspace, "builder"), await make_agent(workspace, "flaky")

    async def running(title: str, by_agent=agent) -> str:  # type: ignore[no-untyped-def]
        task = await create_task(workspace.id, title, by=ME, target_agent_id=by_agent.id)
        await agent_reports(by_agent, "task.accepted", {"taskId": task.id})
        return task.id

    waiting = await running("needs a decision")
    first_card = await agent_asks(agent, waiting, title="First question")
    second_card = await agent_asks(agent, None, title="A question about nothing in particular")
    answered = await running("answered")
    await respond_to_interaction(
        workspace.id,
        await agent_asks(agent, answered),
        {"optionId": "approve"},
        responder=ME,
        via="web",
    )
    failed = await running("broke")
    await agent_reports(agent, "task.status_changed", {"taskId": failed, "status": "failed"})
    succeeded = await running("finished")
    await agent_reports(
        agent,
        "task.child_created",
        {"taskId": "task_child", "parentTaskId": succeeded, "title": "step", "status": "running"},
    )
    await agent_reports(
        agent, "task.status_changed", {"taskId": "task_child", "status": "succeeded"}
    )
    await agent_reports(agent, "task.status_changed", {"taskId": succeeded, "status": "succeeded"})
    lost = await running("connection lost", flaky)
    flaky.status = AgentStatus.OFFLINE
    await flaky.save()
    # Another workspace's troubles never show here.
    other_agent = await make_agent(elsewhere)
    other = await create_task(elsewhere.id, "theirs", by=ME, target_agent_id=other_agent.id)
    await agent_reports(other_agent, "task.accepted", {"taskId": other.id})
    await agent_asks(other_agent, other.id)

    box = await inbox(workspace.id)
    assert box["counts"] == {"waitingForMe": 2, "needsAttention": 2, "recentlyDone": 1}
    # The badge of every page, counted without reading the sections.
    assert await waiting_count(workspace.id) == 2
    first, second = box["waitingForMe"]
    assert [first["interaction"]["id"], second["interaction"]["id"]] == [first_card, second_card]
    assert first["task"]["id"] == waiting and first["task"]["status"] == "waiting_for_human"
    assert first["agent"]["name"] == "builder" and second["task"] is None
    attention = {item["task"]["id"]: item["reason"] for item in box["needsAttention"]}
    assert attention == {failed: "failed", lost: "agent_offline"}
    [done] = box["recentlyDone"]
    assert done["task"]["id"] == succeeded and done["reason"] == "succeeded"


async def test_old_and_expired_items_leave_the_inbox(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "job", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    await agent_asks(agent, None, expiresAt=(utcnow() - timedelta(seconds=1)).isoformat())
    await agent_reports(agent, "task.status_changed", {"taskId": task.id, "status": "cancelled"})
    # A card waits until the policy clock expires it, which it does at its expiry.
    assert (await inbox(workspace.id))["counts"]["waitingForMe"] == 1
    assert await PolicyClock().run_once() == 1
    box = await inbox(workspace.id)
    assert box["counts"]["waitingForMe"] == 0 and box["counts"]["recentlyDone"] == 1
    assert box["waitingForMe"] == []
    a_month_later = await inbox(workspace.id, now=utcnow() + timedelta(days=30))
    assert a_month_later["counts"]["recentlyDone"] == 0


async def test_limits_bound_the_lists_not_the_counts(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    task = await create_task(workspace.id, "job", by=ME, target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    for n in range(4):
        await agent_asks(agent, task.id, title=f"question {n}")
    box = await inbox(workspace.id, limit=2)
    assert box["counts"]["waitingForMe"] == 4 and len(box["waitingForMe"]) == 2


async def test_counts_are_exact_whatever_the_page_holds(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    for n in range(4):
        task = await create_task(workspace.id, f"job {n}", by=ME, target_agent_id=agent.id)
        await agent_reports(agent, "task.accepted", {"taskId": task.id})
        await agent_asks(agent, task.id, title=f"question {n}")
        status = "succeeded" if n % 2 else "cancelled"
        done = await create_task(workspace.id, f"done {n}", by=ME, target_agent_id=agent.id)
        await agent_reports(agent, "task.accepted", {"taskId": done.id})
        await agent_reports(agent, "task.status_changed", {"taskId": done.id, "status": status})
    box = await inbox(workspace.id, limit=10)
    assert "countLimit" not in box
    assert box["counts"] == {"waitingForMe": 4, "needsAttention": 0, "recentlyDone": 4}
    assert await waiting_count(workspace.id) == 4
    # Both statuses merged, newest first.
    finished = [item["task"]["title"] for item in box["recentlyDone"]]
    assert finished == ["done 3", "done 2", "done 1", "done 0"]
    assert len(box["waitingForMe"]) == 4


async def test_narrowed_to_one_agent_and_one_risk(workspace: Workspace) -> None:
    await join(workspace.id, ME)
    builder, tester = await make_agent(workspace, "builder"), await make_agent(workspace, "tester")
    high = await agent_asks(builder, None, title="Drop the table?", risk="high")
    low = await agent_asks(builder, None, title="Tidy up?", risk="low")
    theirs = await agent_asks(tester, None, title="Rerun?", risk="high")
    broke = await create_task(workspace.id, "broke", by=ME, target_agent_id=tester.id)
    await agent_reports(tester, "task.accepted", {"taskId": broke.id})
    await agent_reports(tester, "task.status_changed", {"taskId": broke.id, "status": "failed"})

    def ids(box: dict, section: str = "waitingForMe") -> list[str]:  # type: ignore[type-arg]
        key = "interaction" if section == "waitingForMe" else "task"
        return [item[key]["id"] for item in box[section]]

    assert ids(await inbox(workspace.id)) == [high, low, theirs]
    of_builder = await inbox(workspace.id, agent_id=builder.id)
    assert ids(of_builder) == [high, low] and of_builder["needsAttention"] == []
    assert of_builder["counts"]["waitingForMe"] == 2
    of_tester = await inbox(workspace.id, agent_id=tester.id)
    assert ids(of_tester) == [theirs] and ids(of_tester, "needsAttention") == [broke.id]
    risky = await inbox(workspace.id, risk=Risk.HIGH)
    assert ids(risky) == [high, theirs] and risky["counts"]["waitingForMe"] == 2
    assert ids(await inbox(workspace.id, risk=Risk.HIGH, limit=1)) == [high]
    assert ids(await inbox(workspace.id, agent_id=builder.id, risk=Risk.LOW)) == [low]
