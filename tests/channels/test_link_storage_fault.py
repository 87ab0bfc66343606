"""An email link pressed while the database fails: a "try again" page, and the same link
still decides once the database is back.

A real hub process mails the card through a loopback SMTP server; the link is opened over
HTTP. The fault is the log refusing to grow, as on a full disk: a trigger on the event
table raises the driver's own "disk full" error, so every write but the decision's still
succeeds. A link spent before its decision is stored would be left used with nothing
decided.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from tortoise import Tortoise

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.notify.preferences import Surface, declare_surface, withdraw_surface
from hub.core.store.models import Interaction, InteractionStatus, Workspace
from tests.channels.conftest import eventually, make_agent
from tests.channels.peers import SmtpPeer
from tests.sdk.live import LiveHub, live_hub

pytestmark = pytest.mark.timeout(120)

_FULL_DISK_SQLITE = (
    "CREATE TRIGGER log_disk_full BEFORE INSERT ON event "
    "BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
)
_FULL_DISK_POSTGRES = (
    "CREATE FUNCTION log_disk_full() RETURNS trigger AS $$ BEGIN "
    "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = "
    "'disk_full'; END $$ LANGUAGE plpgsql; "
    "CREATE TRIGGER log_disk_full BEFORE INSERT ON event "
    "FOR EACH ROW EXECUTE FUNCTION log_disk_full()"
)
_DISK_BACK_SQLITE = "DROP TRIGGER log_disk_full"
_DISK_BACK_POSTGRES = "DROP TRIGGER log_disk_full ON event; DROP FUNCTION log_disk_full()"


@pytest.fixture
async def hub(db: str, tmp_path: Path, smtp: SmtpPeer) -> AsyncIterator[LiveHub]:
    # The card is asked from this process, which writes its notifications as the hub's
    # would: it must know that the hub mails them.
    declare_surface(Surface("email"))
    try:
        async with live_hub(db, tmp_path / "hub", LINEUP_SMTP_URL=smtp.url) as running:
            yield running
    finally:
        withdraw_surface("email")


async def ask(hub: LiveHub) -> str:
    """An agent of the hub's workspace asks its owner a card; the card's id."""
    agent = await make_agent(await Workspace.get(id=hub.workspace_id))
    task_id, interaction_id = new_id("task"), new_id("interaction")
    ws, person = hub.workspace_id, f"user:{hub.user_id}"
    await append_event(
        ws,
        "task.created",
        {"taskId": task_id, "title": "Ship the release", "targetAgentId": agent.id},
        actor=person,
    )
    await append_event(ws, "task.accepted", {"taskId": task_id}, actor=f"agent:{agent.id}")
    card = {"id": interaction_id, "type": "approval", "title": "Run the migration?"}
    await append_event(
        ws,
        "interaction.requested",
        {"interaction": card},
        actor=f"agent:{agent.id}",
        task_id=task_id,
    )
    return interaction_id


async def execute(is_postgres: bool, sqlite: str, postgres: str) -> None:
    await Tortoise.get_connection("default").execute_script(postgres if is_postgres else sqlite)


async def test_a_link_pressed_while_the_log_cannot_grow_stays_usable(
    hub: LiveHub, smtp: SmtpPeer, is_postgres: bool
) -> None:
    interaction_id = await ask(hub)
    mail = (await eventually(lambda: smtp.to("owner@example.com"), within=30))[0]
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    approve = re.search(r"- Approve: \S*?(/a/\S+)", plain.get_content()).group(1)  # type: ignore[union-attr]

    await execute(is_postgres, _FULL_DISK_SQLITE, _FULL_DISK_POSTGRES)
    try:
        refused = await hub.http.post(approve, data={})
    finally:
        await execute(is_postgres, _DISK_BACK_SQLITE, _DISK_BACK_POSTGRES)
    assert refused.status_code == 503, refused.text
    assert "text/html" in refused.headers["content-type"]
    assert "Nothing was decided yet" in refused.text and "storage_full" in refused.text
    assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING

    decided = await hub.http.post(approve, data={})
    assert decided.status_code == 200, decided.text
    interaction = await Interaction.get(id=interaction_id)
    assert interaction.status == InteractionStatus.RESOLVED
    assert (interaction.responded_via, interaction.response) == ("email", {"optionId": "approve"})
    replayed = await hub.http.post(approve, data={})
    assert replayed.status_code == 410 and "used already" in replayed.text
