"""``fresh`` builds the same unsaved row as the model's constructor, faster."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hub.core.log.fresh_rows import fresh
from hub.core.store.models import Event, Message, Workspace


def _state(row: object) -> dict[str, object]:
    return dict(vars(row))


async def test_a_fresh_row_is_the_row_the_constructor_builds(db: str) -> None:
    now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    values = {
        "workspace_id": "wsp_1",
        "sequence": 7,
        "id": "env_1",
        "type": "message.created",
        "actor": "agent:agt_1",
        "payload": {"content": "hi"},
        "occurred_at": now,
        "recorded_at": now,
    }
    assert _state(fresh(Event, **values)) == _state(Event(**values))
    message = {"id": "msg_1", "workspace_id": "wsp_1", "conversation_id": "cnv_1"}
    message |= {"author": "agent:agt_1", "content": "", "created_at": now}
    built, made = fresh(Message, **message), Message(**message)
    assert _state(built) == _state(made)
    built.attachments.append("x")
    assert fresh(Message, **message).attachments == [], "each row gets its own default list"


async def test_a_fresh_row_is_stored_and_read_back(workspace: Workspace) -> None:
    now = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    row = fresh(
        Event,
        workspace_id=workspace.id,
        sequence=1,
        id="env_fresh",
        type="note",
        actor="system",
        payload={"n": 1},
        occurred_at=now,
        recorded_at=now,
    )
    await row.save(force_create=True)
    stored = await Event.get(workspace_id=workspace.id, id="env_fresh")
    assert (stored.payload, stored.recorded_at, stored.recipient_agent_id) == ({"n": 1}, now, None)


async def test_a_name_the_model_lacks_is_refused(db: str) -> None:
    with pytest.raises(TypeError, match="no field colour"):
        fresh(Message, id="msg_1", colour="red")
