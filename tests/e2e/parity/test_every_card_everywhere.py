"""Every kind of card answered on every surface, then read-only on every surface.

For each cell (a kind × the surface it is answered on): the agent asks the card with the
hub's MCP asking tools, through the official MCP client; it shows on every surface (the web
page in Chromium, the mail the SMTP server received, the Telegram, Slack and Feishu
messages, the notebook inbox's widget, the form at the agent's terminal); the surface
refuses a wrong answer, deciding nothing, then takes the person's answer; the agent's tool
call returns that answer exactly once, recorded ``via`` that surface; and every surface, the
answering one included, then shows the card decided by Ada via that surface (or answered in
the terminal) and takes no other answer.

What a surface cannot answer (``Surface.cannot``: an edit or a quorum vote at the terminal)
its cell proves instead: the terminal approves the action as proposed, and is never asked a
quorum card.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.e2e.parity.kinds import EDIT, KINDS, MIGRATION
from tests.e2e.parity.stage import Asked, Stage
from tests.e2e.parity.surfaces import SURFACES, Surface
from tests.e2e.parity.surfaces.base import TERMINAL

pytestmark = [pytest.mark.asyncio(loop_scope="package"), pytest.mark.same_on_every_database]


async def each(step: Callable[..., Awaitable[None]], cards: list[Asked], **given: Any) -> None:
    """``step`` for each card in turn (one surface: its page, its chat, one at a time)."""
    for card in cards:
        await step(card, **given)


@pytest.mark.parametrize("on", list(SURFACES))
@pytest.mark.parametrize("kind", list(KINDS))
async def test_answered_here_read_only_everywhere(
    stage: Stage, surfaces: dict[str, Surface], kind: str, on: str
) -> None:
    card = await stage.ask(KINDS[kind])
    await asyncio.gather(*(surface.shown(card) for surface in surfaces.values()))

    await surfaces[on].answer(card)

    heard = await card.heard()
    assert heard.via == on
    expected = KINDS[kind].answer
    assert {k: heard.response.get(k) for k in expected} == expected
    await asyncio.gather(*(surface.read_only(card, via=on) for surface in surfaces.values()))
    assert await stage.decisions(card.id) == 1
    late = await stage.ada.respond(stage.workspace_id, card.id, expected)
    if on == TERMINAL:  # withdrawn in the hub, its answer given at the terminal
        assert late.status_code == 410 and late.json()["error"]["code"] == "interaction_cancelled"
    else:
        assert late.status_code == 409 and late.json()["error"]["details"]["via"] == on


@pytest.mark.parametrize("on", list(SURFACES))
async def test_a_quorum_vote_here_is_counted_everywhere(
    stage: Stage, surfaces: dict[str, Surface], on: str
) -> None:
    policy = {"quorum": 2, "approvers": [stage.ada.email, stage.bo.email]}
    card = await stage.ask(KINDS["approval"], policy=policy)
    await asyncio.gather(*(surface.shown(card) for surface in surfaces.values()))
    await asyncio.gather(*(surface.votes_shown(card, 0) for surface in surfaces.values()))

    # Ada's vote: the card stays open for Bo's. A surface that cannot vote (the terminal)
    # proves it was not asked, and Ada votes on the web.
    voter = surfaces[on] if "quorum" not in surfaces[on].cannot else surfaces["web"]
    await surfaces[on].vote(card)
    if voter is not surfaces[on]:
        await voter.vote(card)

    await asyncio.gather(*(surface.votes_shown(card, 1) for surface in surfaces.values()))
    assert (await stage.card(card.id))["status"] == "pending" and not card.waiting.done()
    voted = await stage.bo.respond(stage.workspace_id, card.id, {"optionId": "approve"})
    assert voted.status_code == 200, voted.text

    heard = await card.heard()
    assert heard.approved
    assert [(v["actor"], v["via"]) for v in heard.votes] == [
        (f"user:{stage.ada.user_id}", voter.name),
        (f"user:{stage.bo.user_id}", "api"),
    ]
    decided = await stage.card(card.id)
    who = decided["respondedByName"]
    await asyncio.gather(
        *(surface.read_only(card, via=decided["via"], who=who) for surface in surfaces.values())
    )
    assert await stage.decisions(card.id) == 1 and stage.frames[card.id] == 1


@pytest.mark.parametrize("how", ["all", "item by item"])
@pytest.mark.parametrize("on", list(SURFACES))
async def test_a_batch_answered_here_is_read_only_everywhere(
    stage: Stage, surfaces: dict[str, Surface], on: str, how: str
) -> None:
    cards = await stage.ask_together([KINDS["approval"]] * 3)
    await asyncio.gather(*(each(surface.shown, cards) for surface in surfaces.values()))
    picks = ["approve"] * 3 if how == "all" else ["approve", "reject", "approve"]

    await surfaces[on].answer_batch(cards, picks)

    for card, pick in zip(cards, picks, strict=True):
        heard = await card.heard()
        assert (heard.option_id, heard.via) == (pick, on)
    await asyncio.gather(*(each(surface.read_only, cards, via=on) for surface in surfaces.values()))
    for card in cards:
        assert await stage.decisions(card.id) == 1 and stage.frames[card.id] == 1


@pytest.mark.parametrize("on", list(SURFACES))
async def test_an_action_edited_here_reaches_the_agent_edited(
    stage: Stage, surfaces: dict[str, Surface], on: str
) -> None:
    card = await stage.ask(EDIT)
    await asyncio.gather(*(surface.shown(card) for surface in surfaces.values()))

    await surfaces[on].answer_edited(card)

    heard = await card.heard()
    via = surfaces[on].edits_via or on
    assert heard.via == via and heard.approved
    if "edit" in surfaces[on].cannot:  # approved as proposed (the terminal)
        assert not heard.edited and heard.approved_action(MIGRATION) == MIGRATION.fields
    else:
        assert heard.edited
        assert heard.approved_action(MIGRATION) == {**MIGRATION.fields, **EDIT.answer["action"]}
    await asyncio.gather(*(surface.read_only(card, via=via) for surface in surfaces.values()))
    assert await stage.decisions(card.id) == 1 and stage.frames[card.id] == 1
