"""The notebook inbox against a real hub: every card type shown and answered by clicking
(recorded via notebook), live arrivals, and read-only once decided elsewhere."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from hub.core.ids import new_id
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event, Membership, Role
from hub.notebook.inbox import Inbox
from hub.sdk import Resolution
from hub.sdk.notebook import AnswerRefused
from tests.notebook.live import cards, notebook_agent, person, running_task
from tests.sdk.live import LiveHub, live_hub


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def test_every_card_type_is_answered_by_clicking_in_the_inbox(
    hub: LiveHub, tmp_path: Path
) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    inbox = await Inbox.open(people)
    try:
        task = await running_task(people, agent)
        asked = cards()
        answers = {
            kind: asyncio.create_task(task.request_interaction(card))
            for kind, card in asked.items()
        }
        # Cards asked after the inbox opened arrive live over /ws/client.
        await inbox.wait_for(lambda box: len(box.pending) == len(asked))
        by_title = {card.view["card"]["title"]: card for card in inbox.cards.values()}
        shown = {kind: by_title[card.title] for kind, card in asked.items()}

        # Agent text is inert: escaped into the HTML widgets, never markup.
        header = shown["approval"].widget.children[0].value
        assert "&lt;script&gt;" in header and "<script>" not in header and "<b>" not in header
        assert "High risk" in header
        assert "<iframe" not in shown["review"].widget.children[0].value

        approval = shown["approval"]
        approval.comment.value = "fine, it is rebuilt tonight"
        approval.option_buttons["approve"].click()
        # High risk: a second, deliberate step before anything is sent.
        assert approval.confirm_row.layout.display == "flex" and not approval._sending
        assert "Approve" in approval.confirm_text.value
        approval.confirm.click()
        shown["choice"].option_buttons["us"].click()
        shown["multi"].checkboxes["sales"].value = True
        shown["multi"].checkboxes["staff"].value = True
        shown["multi"].submit.click()
        shown["review"].option_buttons["request_changes"].click()
        entry = shown["input"]
        entry.text.value = "not an address"
        entry.submit.click()
        await entry.answered()
        assert entry.answerable and "Not sent" in entry.status.value  # the card said why
        entry.text.value = "ada@example.com"
        entry.submit.click()
        for card in shown.values():
            await card.answered()

        got: dict[str, Resolution] = {k: await asyncio.wait_for(a, 30) for k, a in answers.items()}
        assert got["approval"].approved and got["approval"].comment == "fine, it is rebuilt tonight"
        assert got["choice"].option_id == "us"
        assert got["multi"].option_ids == ["sales", "staff"]
        assert got["input"].text == "ada@example.com"
        assert got["review"].option_id == "request_changes"
        assert {r.via for r in got.values()} == {"notebook"}
        resolved = await Event.filter(workspace_id=hub.workspace_id, type="interaction.resolved")
        assert len(resolved) == len(asked)
        assert {e.payload["via"] for e in resolved} == {"notebook"}
        for card in shown.values():
            assert not card.pending and not card.answerable
            assert all(control.disabled for control in card.controls)
            assert "via a notebook" in card.status.value
    finally:
        await inbox.close()
        await agent.close()


async def test_a_card_decided_elsewhere_turns_read_only(hub: LiveHub, tmp_path: Path) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    task = await running_task(people, agent)
    waiting = asyncio.create_task(task.request_approval("Restart the worker?"))
    inbox = await Inbox.open(people)
    try:
        await inbox.wait_for(lambda box: len(box.pending) == 1)  # shown from the inbox list
        (card,) = inbox.cards.values()
        assert card.answerable and not any(c.disabled for c in card.controls)
        await hub.respond(card.id, "reject", comment="not now")  # the web API, not here
        await inbox.wait_for(lambda box: not box.card(card.id).pending)
        assert all(control.disabled for control in card.controls)
        assert "Reject" in card.status.value and "via the API" in card.status.value
        assert (await asyncio.wait_for(waiting, 30)).via == "api"
        # A late click from a stale copy is refused with the decision, not an error.
        with pytest.raises(AnswerRefused) as late:
            await people.responder(card.id)({"optionId": "approve"})
        assert late.value.code == "already_decided" and late.value.decided is not None
        assert late.value.decided["via"] == "api"
        assert "Nothing waiting" in inbox.heading.value
    finally:
        await inbox.close()
        await agent.close()


async def test_a_card_its_agent_withdrew_turns_read_only_saying_why(
    hub: LiveHub, tmp_path: Path
) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    task = await running_task(people, agent)
    waiting = asyncio.create_task(task.request_approval("Run `make deploy`?"))
    inbox = await Inbox.open(people)
    try:
        await inbox.wait_for(lambda box: len(box.pending) == 1)
        (card,) = inbox.cards.values()
        # The person said yes in the agent's terminal first: the agent takes the card back.
        await task.withdraw_interaction(card.id, reason="answered_in_terminal", note="<b>yes</b>")
        answer = await asyncio.wait_for(waiting, 30)
        assert answer.withdrawn and not answer.approved
        await inbox.wait_for(lambda box: not box.card(card.id).pending)
        assert all(control.disabled for control in card.controls)
        assert "Answered in the terminal; this card takes no answer." in card.status.value
        assert "&lt;b&gt;yes&lt;/b&gt;" in card.status.value  # the agent's note, as text
        assert "Closed:" in card.status.value
        with pytest.raises(AnswerRefused) as late:
            await people.responder(card.id)({"optionId": "approve"})
        assert late.value.code == "interaction_cancelled"
        assert "Nothing waiting" in inbox.heading.value
    finally:
        await inbox.close()
        await agent.close()


async def test_a_quorum_card_counts_votes_and_says_mine_stands(
    hub: LiveHub, tmp_path: Path
) -> None:
    bo, _ = await create_user("bo@example.com", "correct horse", "Bo")
    await Membership.create(
        id=new_id("membership"), workspace_id=hub.workspace_id, user=bo, role=Role.MEMBER
    )
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    task = await running_task(people, agent)
    policy = {"mode": "quorum", "required": 2, "approvers": ["owner@example.com", bo.email]}
    waiting = asyncio.create_task(task.request_approval("Rotate the keys?", policy=policy))
    inbox = await Inbox.open(people)
    try:
        await inbox.wait_for(lambda box: len(box.pending) == 1)
        (card,) = inbox.cards.values()
        assert "0 of 2 approvals so far" in card.votes.value
        card.option_buttons["approve"].click()
        await card.answered()
        # A vote leaves the card open: it says so, never "Sending…", and asks no more.
        assert "You voted: Approve." in card.status.value
        assert "Sending" not in card.status.value
        assert "1 of 2 approvals so far" in card.votes.value
        assert "Owner: Approve (via a notebook)" in card.votes.value
        assert card.pending and not card.answerable
        assert all(control.disabled for control in card.controls)

        # Bo votes on the web API: the inbox shows the count live, then the decision.
        bo_token = (await create_api_token(bo, "tests"))[1]
        async with httpx.AsyncClient(
            base_url=hub.url, headers={"Authorization": f"Bearer {bo_token}"}
        ) as bo_http:
            voted = await bo_http.post(
                f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card.id}/respond",
                json={"optionId": "approve"},
            )
            assert voted.status_code == 200, voted.text
        await inbox.wait_for(lambda box: not box.card(card.id).pending)
        assert "Bo: Approve (via the API)" in card.votes.value
        assert "Decided:" in card.status.value
        assert (await asyncio.wait_for(waiting, 30)).approved
    finally:
        await inbox.close()
        await agent.close()


async def test_a_tasks_approvals_are_answered_together_with_a_confirmation_for_high_risk(
    hub: LiveHub, tmp_path: Path
) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent")
    task = await running_task(people, agent, "Release")
    inbox = await Inbox.open(people)
    try:
        asks = [
            task.request_approval("Migrate", risk="high"),
            task.request_approval("Restart"),
            task.request_approval("Purge"),
        ]
        waiting = [asyncio.create_task(a) for a in asks]
        await inbox.wait_for(lambda box: len(box.pending) == 3 and bool(box.batches))
        (batch,) = inbox.batches.values()
        await inbox.wait_for(lambda box: len(batch.pending) == 3)
        assert batch.approve_all.description == "Approve all (3)"
        assert batch.confirm.layout.display == "flex"  # one is high risk

        batch.approve_all.click()  # not confirmed: nothing is sent
        assert "needs the confirmation ticked" in batch.status.value
        batch.confirm.value = True
        batch.approve_all.click()
        await batch.answered()
        assert "Recorded 3 answers." in batch.status.value
        got: list[Resolution] = [await asyncio.wait_for(w, 30) for w in waiting]
        assert [(r.option_id, r.via) for r in got] == [("approve", "notebook")] * 3
        await inbox.wait_for(lambda box: not box.pending)
        assert batch.approve_all.disabled and batch.send_items.disabled
        events = await Event.filter(workspace_id=hub.workspace_id, type="interaction.resolved")
        assert len({e.payload.get("batchId") for e in events}) == 1
    finally:
        await inbox.close()
        await agent.close()
