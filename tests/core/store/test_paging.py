"""Keyset pages: rows that share their sort key are told apart by id, so none is lost or
shown twice; a cursor of another list, or one changed by a byte, is refused."""

from __future__ import annotations

import base64

import pytest

from hub.core.store.models import Task, Workspace
from hub.core.store.paging import BadCursor, decode
from hub.core.work.conversations import CONVERSATION_ORDER
from hub.core.work.tasks import TASK_ORDER, create_task, list_tasks
from hub.protocol.clock import utcnow
from tests.core.agent_reports import make_agent


async def test_rows_of_one_moment_page_by_id(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    made = [
        (await create_task(workspace.id, f"t{n}", by="user:usr_me", target_agent_id=agent.id)).id
        for n in range(7)
    ]
    same = utcnow()
    await Task.filter(id__in=made).update(created_at=same)
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = await list_tasks(workspace.id, limit=2, cursor=cursor)
        seen.extend(t.id for t in page.items)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted(made, reverse=True)


async def test_a_cursor_is_bound_to_its_list_and_its_bytes(workspace: Workspace) -> None:
    agent = await make_agent(workspace)
    for n in range(2):
        await create_task(workspace.id, f"t{n}", by="user:usr_me", target_agent_id=agent.id)
    cursor = (await list_tasks(workspace.id, limit=1)).next_cursor
    assert cursor is not None and decode(TASK_ORDER, cursor)
    with pytest.raises(BadCursor):
        decode(CONVERSATION_ORDER, cursor)
    raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    raw[3] ^= 1
    changed = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    with pytest.raises(BadCursor) as refused:
        await list_tasks(workspace.id, cursor=changed)
    assert refused.value.status == 400 and refused.value.code == "bad_cursor"
