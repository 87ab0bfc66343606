"""The inbox's counts kept by the projection: each person's, exact, and equal to a recount
after any mix of events (hub.core.work.inbox_counts)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hub.core.approvals.policy_clock import PolicyClock
from hub.core.errors import HubError
from hub.core.ids import new_id
from hub.core.log.events import append_event, rebuild_projections
from hub.core.people.accounts import create_workspace
from hub.core.people.members import change_role, remove_member
from hub.core.store.models import (
    Agent,
    Interaction,
    InteractionStatus,
    Membership,
    Role,
    Task,
    User,
    Workspace,
)
from hub.core.store.transactions import in_transaction
from hub.core.work import inbox_counts
from hub.core.work.batch_answers import BatchItem, respond_to_batch
from hub.core.work.inbox import inbox, reader_of, waiting_count
from hub.core.work.inbox_counts import Reader
from hub.core.work.interactions import respond_to_interaction
from hub.core.work.tasks import create_task
from hub.protocol.clock import utcnow
from tests.core.agent_reports import agent_asks, agent_reports, make_agent

APPROVE = {"optionId": "approve"}


async def member(make_user, workspace: Workspace, name: str, role: Role = Role.MEMBER) -> User:  # type: ignore[no-untyped-def]
    user, _ = await make_user(name)
    await Membership.create(id=new_id("membership"), workspace=workspace, user=user, role=role)
    return user


async def reader(workspace: Workspace, user: User) -> Reader:
    return reader_of(await Membership.get(workspace_id=workspace.id, user_id=user.id))


async def waiting_ids(workspace: Workspace, user: User, **narrowed: Any) -> list[str]:
    """Every card waiting for ``user``, read page by page."""
    who, ids, cursor = await reader(workspace, user), [], None
    while True:
        box = await inbox(
            workspace.id, reader=who, limit=2, section="waitingForMe", cursor=cursor, **narrowed
        )
        ids += [item["interaction"]["id"] for item in box["waitingForMe"]]
        cursor = box["nextCursor"]
        if cursor is None:
            return ids


async def running_task(workspace: Workspace, agent: Agent) -> str:
    task = await create_task(workspace.id, "job", by="user:usr_x", target_agent_id=agent.id)
    await agent_reports(agent, "task.accepted", {"taskId": task.id})
    return task.id


async def test_what_waits_for_each_person(make_user) -> None:  # type: ignore[no-untyped-def]
    owner, workspace = await make_user("owner")
    ada, bo = await member(make_user, workspace, "ada"), await member(make_user, workspace, "bo")
    vic = await member(make_user, workspace, "vic", Role.VIEWER)
    agent = await make_agent(workspace)
    task = await running_task(workspace, agent)
    anyone = await agent_asks(agent, task, title="anyone")
    for_ada = await agent_asks(
        agent, task, title="ada's", policy={"approvers": [ada.id], "escalateAfterS": 60,
                                            "escalateTo": [bo.id]},
    )  # fmt: skip
    quorum = await agent_asks(
        agent, task, title="two of us", policy={"mode": "quorum", "required": 2}
    )

    async def seen() -> dict[str, list[str]]:
        return {u.display_name: await waiting_ids(workspace, u) for u in (owner, ada, bo, vic)}

    assert await seen() == {
        "owner": [anyone, quorum],
        "ada": [anyone, for_ada, quorum],
        "bo": [anyone, quorum],
        "vic": [],  # a viewer answers nothing: nothing waits for them
    }
    # A vote takes the card off the voter's list alone.
    await respond_to_interaction(
        workspace.id, quorum, APPROVE, responder=f"user:{bo.id}", via="web"
    )
    assert (await seen())["bo"] == [anyone] and (await seen())["ada"] == [anyone, for_ada, quorum]
    # The escalation names bo too.
    await PolicyClock(now=lambda: utcnow() + timedelta(seconds=65)).run_once()
    assert (await seen())["bo"] == [anyone, for_ada]
    # Roles are read with the counts: a member made a viewer has nothing waiting, and has it
    # all again as a member.
    await change_role(workspace.id, ada.id, Role.VIEWER, by=owner)
    assert (await seen())["ada"] == []
    await change_role(workspace.id, ada.id, Role.MEMBER, by=owner)
    assert (await seen())["ada"] == [anyone, for_ada, quorum]
    for user in (owner, ada, bo, vic):
        ids = (await seen())[user.display_name]
        who = await reader(workspace, user)
        box = await inbox(workspace.id, reader=who)
        assert box["counts"]["waitingForMe"] == len(ids) == await waiting_count(workspace.id, who)
    # Nobody's inbox holds every open card.
    assert (await inbox(workspace.id))["counts"]["waitingForMe"] == 3
    # The task ends: its open cards are cancelled with it, and wait for nobody.
    await agent_reports(agent, "task.status_changed", {"taskId": task, "status": "cancelled"})
    assert await seen() == {"owner": [], "ada": [], "bo": [], "vic": []}
    assert await counts_match(workspace.id)


async def counts_match(workspace_id: str) -> bool:
    since = inbox_counts.first_day(utcnow(), 8)
    async with in_transaction() as connection:
        kept = await inbox_counts.kept(workspace_id, connection, since=since)
        counted = await inbox_counts.recount(workspace_id, connection, since=since)
    assert kept == counted
    return True


# --- a random mix of events ------------------------------------------------------------

POLICIES: list[dict[str, Any] | None] = [
    None,
    {"approvers": ["ada"]},
    {"approvers": ["ada", "bo"], "mode": "quorum", "required": 2},
    {"mode": "quorum", "required": 2},
    {"approvers": ["bo"], "escalateAfterS": 60, "escalateTo": ["cy"]},
]
PEOPLE = ("owner", "ada", "bo", "cy", "vic")
# Weighted towards what makes cards and tasks to act on.
KINDS = ["task"] * 3 + ["ask"] * 4 + ["answer"] * 4 + [
    "child", "batch", "withdraw", "end", "end", "resend", "resend", "role", "leave", "join",
    "clock",
]  # fmt: skip
STEPS = 40


@dataclass
class World:
    workspace: Workspace
    people: dict[str, User]
    agents: list[Agent]
    tasks: list[str] = field(default_factory=list)
    cards: list[str] = field(default_factory=list)
    sent: list[tuple[Agent, str, dict[str, Any], str]] = field(default_factory=list)

    async def report(self, agent: Agent, type: str, payload: dict[str, Any], **kw: Any) -> None:
        envelope = new_id("event")
        self.sent.append((agent, type, payload, envelope))
        await append_event(
            self.workspace.id, type, payload, actor=f"agent:{agent.id}", envelope_id=envelope, **kw
        )

    async def step(self, kind: str, a: int, b: int) -> None:
        ws = self.workspace.id
        agent = self.agents[a % len(self.agents)]
        person = self.people[PEOPLE[b % len(PEOPLE)]]
        task = self.tasks[a % len(self.tasks)] if self.tasks else None
        card = self.cards[b % len(self.cards)] if self.cards else None
        if kind == "task":
            made = await create_task(ws, f"task {a}", by="user:usr_x", target_agent_id=agent.id)
            self.tasks.append(made.id)
            if b % 3:
                await self.report(agent, "task.accepted", {"taskId": made.id})
        elif kind == "child" and task:
            child = new_id("task")
            status = ("queued", "running", "succeeded", "failed")[b % 4]
            owner = await Task.get(id=task)
            by = next(x for x in self.agents if x.id == owner.target_agent_id)
            await self.report(
                by,
                "task.child_created",
                {"taskId": child, "parentTaskId": task, "title": "step", "status": status},
            )
            self.tasks.append(child)
        elif kind == "ask":
            policy = POLICIES[b % len(POLICIES)]
            card_fields: dict[str, Any] = {"title": f"card {a}"}
            if policy is not None:
                card_fields["policy"] = {
                    k: [self.people[p].id for p in v] if k in ("approvers", "escalateTo") else v
                    for k, v in policy.items()
                }
            if a % 5 == 0:
                card_fields["expiresAt"] = (utcnow() + timedelta(hours=1)).isoformat()
            on_task = None
            if task and a % 2:
                owner = await Task.get(id=task)
                agent = next(x for x in self.agents if x.id == owner.target_agent_id)
                on_task = task
            made_id = new_id("interaction")
            await self.report(
                agent,
                "interaction.requested",
                {"interaction": {"id": made_id, "type": "approval", **card_fields}},
                task_id=on_task,
            )
            self.cards.append(made_id)
        elif kind == "answer" and card:
            answer = APPROVE if a % 3 else {"optionId": "reject"}
            approvers = ((await Interaction.get(id=card)).policy or {}).get("approvers")
            if approvers and a % 2:  # mostly someone the card names
                person = await User.get(id=approvers[b % len(approvers)])
            await respond_to_interaction(ws, card, answer, responder=f"user:{person.id}", via="web")
        elif kind == "batch" and task:
            open_cards = await Interaction.filter(task_id=task, status=InteractionStatus.PENDING)
            items = [BatchItem(c.id, APPROVE) for c in open_cards]
            if items:
                await respond_to_batch(ws, task, items, responder=f"user:{person.id}", via="web")
        elif kind == "withdraw" and card:
            asked = await Interaction.get(id=card)
            by = next((x for x in self.agents if x.id == asked.agent_id), agent)
            await self.report(
                by, "interaction.withdrawn", {"interactionId": card, "reason": "no_longer_needed"}
            )
        elif kind == "end" and task:
            owner = await Task.get(id=task)
            by = next(x for x in self.agents if x.id == owner.target_agent_id)
            status = ("succeeded", "failed", "cancelled", "running")[b % 4]
            await self.report(by, "task.status_changed", {"taskId": task, "status": status})
        elif kind == "resend" and self.sent:
            by, type, payload, envelope = self.sent[a % len(self.sent)]
            await append_event(ws, type, payload, actor=f"agent:{by.id}", envelope_id=envelope)
        elif kind == "role" and person.display_name != "owner":
            role = (Role.MEMBER, Role.VIEWER, Role.OWNER)[a % 3]
            await change_role(ws, person.id, role, by=self.people["owner"])
        elif kind == "leave" and person.display_name != "owner":
            await remove_member(ws, person.id, by=self.people["owner"])
        elif kind == "join":  # back in the team (as an invitation accepted would)
            await Membership.get_or_create(
                workspace_id=ws, user_id=person.id,
                defaults={"id": new_id("membership"), "role": Role.MEMBER},
            )  # fmt: skip
        elif kind == "clock":
            await PolicyClock(
                now=lambda: utcnow() + timedelta(seconds=30 + 3600 * (a % 2))
            ).run_once()


async def expected_waiting(workspace: Workspace, user: User) -> list[str]:
    """The open cards ``user`` may answer and has not voted on, straight from the cards'
    policies and votes, oldest first."""
    role = await Membership.filter(workspace_id=workspace.id, user_id=user.id).first()
    if role is None or role.role == Role.VIEWER:
        return []
    cards = await Interaction.filter(
        workspace_id=workspace.id, status=InteractionStatus.PENDING
    ).order_by("created_at", "id")
    mine = []
    for card in cards:
        approvers = (card.policy or {}).get("approvers") or []
        voters = {str(v.get("actor", "")).partition(":")[2] for v in card.votes or []}
        if (not approvers or user.id in approvers) and user.id not in voters:
            mine.append(card.id)
    return mine


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(chance=st.randoms(use_true_random=False))
async def test_kept_counts_equal_a_recount_after_any_mix_of_events(db, chance) -> None:  # type: ignore[no-untyped-def]
    # People without passwords: hashing five per example would cost more than the example.
    people = {
        name: await User.create(id=new_id("user"), email=f"{new_id('user')}@example.com",
                                display_name=name)
        for name in PEOPLE
    }  # fmt: skip
    owner = people["owner"]
    workspace = await create_workspace("mixed", owner)
    for name in PEOPLE[1:]:
        role = Role.VIEWER if name == "vic" else Role.MEMBER
        await Membership.create(
            id=new_id("membership"), workspace=workspace, user=people[name], role=role
        )
    world = World(workspace, people, [await make_agent(workspace, n) for n in ("a1", "a2")])
    steps = [
        (chance.choice(KINDS), chance.randrange(51), chance.randrange(51)) for _ in range(STEPS)
    ]
    for kind, a, b in steps:
        # A step refused changed nothing: the counts must say the same.
        with contextlib.suppress(HubError):
            await world.step(kind, a, b)
    assert await counts_match(workspace.id)
    for user in people.values():
        if not await Membership.filter(workspace_id=workspace.id, user_id=user.id).exists():
            continue
        expected = await expected_waiting(workspace, user)
        assert await waiting_ids(workspace, user) == expected
        box = await inbox(workspace.id, reader=await reader(workspace, user))
        assert box["counts"]["waitingForMe"] == len(expected)
        for agent in world.agents:
            narrowed = await waiting_ids(workspace, user, agent_id=agent.id)
            box = await inbox(workspace.id, reader=await reader(workspace, user), agent_id=agent.id)
            assert box["counts"]["waitingForMe"] == len(narrowed)
    await section_counts_match(workspace)
    # A replay of the log keeps the same counts.
    await rebuild_projections([workspace.id])
    assert await counts_match(workspace.id)
    await section_counts_match(workspace)


async def section_counts_match(workspace: Workspace) -> None:
    """Each section's count is the number of items it pages through."""
    for agent_id in [None, *[a.id for a in await Agent.filter(workspace_id=workspace.id)]]:
        box = await inbox(workspace.id, agent_id=agent_id, limit=200)
        for name in ("waitingForMe", "needsAttention", "recentlyDone"):
            assert box["counts"][name] == len(box[name]), (name, agent_id)
