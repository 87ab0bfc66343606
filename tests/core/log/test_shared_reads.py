"""Reads many callers make at once share one query (a storm of hellos), and none of them
reads rows older than it would have read alone."""

from __future__ import annotations

import asyncio

import pytest

from hub.core.agents.registry import agent_for_credential
from hub.core.errors import HubError
from hub.core.ids import new_id
from hub.core.log.events import append_event, current_workspace, last_sequence
from hub.core.store.models import Workspace
from tests.core.agent_setup import paired_agent
from tests.core.queries import record_queries


async def test_hellos_at_once_look_their_agents_up_in_one_query(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet = [await paired_agent(workspace, f"agent-{n}") for n in range(5)]
    queries = record_queries(monkeypatch)
    found = await asyncio.gather(
        *(agent_for_credential(credential) for _, credential in fleet),
        agent_for_credential(fleet[0][1]),
        agent_for_credential("lu_agt_not-a-credential"),
        return_exceptions=True,
    )
    assert len([q for q in queries if 'FROM "agent"' in q]) == 1
    assert [a.id for a in found[:6]] == [a.id for a, _ in fleet] + [fleet[0][0].id]  # type: ignore[union-attr]
    assert found[0] is not found[5]  # each caller its own row: one's edits are not another's
    assert isinstance(found[6], HubError) and found[6].code == "invalid_credential"


async def test_a_shared_read_of_the_workspace_is_never_older_than_the_call(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = record_queries(monkeypatch)
    rows = await asyncio.gather(*(current_workspace(workspace.id) for _ in range(20)))
    assert len([q for q in queries if 'FROM "workspace"' in q]) == 1
    assert len({id(row) for row in rows}) == 20

    # A read asked for after an append sees it, though another read was under way.
    before = asyncio.ensure_future(last_sequence(workspace.id))
    await asyncio.sleep(0)  # the first read's batch has started
    appended = await append_event(
        workspace.id,
        "conversation.created",
        {"conversationId": new_id("conversation"), "title": "x"},
        actor="system",
    )
    assert await last_sequence(workspace.id) == appended.sequence
    assert await before <= appended.sequence

    with pytest.raises(HubError) as missing:
        await current_workspace("ws_nothing_here")
    assert missing.value.code == "not_found"
