"""Both example notebooks, executed on a real ipykernel against a live hub.

* The agent notebook pairs itself, runs its data job and waits at the approval gate; the
  test answers through the web API while the cell waits, and the saved notebook shows the
  decision and what the destructive step then did.
* The inbox notebook shows five waiting cards (every type) as widgets; while its last cell
  awaits, the test presses and fills them through the kernel's comm protocol as a browser
  would, and the hub records each answer via notebook.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import nbformat
import pytest

from hub.core.store.models import Event, Interaction, InteractionStatus
from tests.notebook.kernel import (
    click,
    notebook_client,
    outputs_text,
    set_value,
    state_of,
    widget,
)
from tests.notebook.live import cards, notebook_agent, person, running_task, token_of, until
from tests.sdk.live import LiveHub, live_hub

NOTEBOOK_TIMEOUT_S = 180


@pytest.fixture
async def hub(db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        # What a person sets before starting the kernel (the kernel inherits it).
        monkeypatch.setenv("LINEUP_HUB", running.url)
        monkeypatch.setenv("LINEUP_TOKEN", token_of(running))
        monkeypatch.setenv("LINEUP_AGENT_HOME", str(tmp_path / "agent-home"))
        monkeypatch.setenv("LINEUP_INBOX_WAIT_S", "120")
        yield running


async def test_the_agent_notebook_waits_for_an_approval_given_on_the_web(
    hub: LiveHub, tmp_path: Path
) -> None:
    client = notebook_client("agent.ipynb", tmp_path)
    running = asyncio.create_task(client.async_execute())
    try:
        pending: list[Interaction] = []

        async def asked() -> bool:
            if running.done():
                running.result()  # a failed cell: raise it here
            pending[:] = await Interaction.filter(
                workspace_id=hub.workspace_id, status=InteractionStatus.PENDING
            )
            return bool(pending)

        await until(asked, within_s=NOTEBOOK_TIMEOUT_S)
        # While the cell waits, its panel shows the task waiting and the pending card.
        state = await widget(client, "lineup-task-state")
        await state_of(client, state, "value", lambda v: "waiting for a person" in str(v))
        card = await widget(client, f"lineup-card-{pending[0].id}", "lineup-card")
        assert card
        approve = await widget(client, f"lineup-card-{pending[0].id}", "lineup-option-approve")
        assert client.widget_state[approve]["disabled"] is False  # answerable there too
        await hub.respond(pending[0].id, "approve", comment="go ahead")
        await asyncio.wait_for(running, NOTEBOOK_TIMEOUT_S)
    finally:
        if not running.done():
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    # Decided on the web: the panel's copy of the card turned read-only.
    assert client.widget_state[approve]["disabled"] is True
    nbformat.write(client.nb, tmp_path / "agent-run.ipynb")  # the saved notebook
    (waiting_cell,) = [c for c in client.nb.cells if "request_approval(" in c.source]
    views = [o for o in waiting_cell.outputs if "data" in o]
    assert views and "application/vnd.jupyter.widget-view+json" in views[0]["data"]
    saved = outputs_text(client)
    assert "Traceback" not in saved, saved
    assert "2 duplicates: ids [3, 5]" in saved
    assert "Decision: approve via api (go ahead)" in saved
    assert "Deleted 2 duplicates; 4 orders remain" in saved
    # The rich display of the task, as the hub recorded it.
    assert "Deduplicate the orders table" in saved and "succeeded" in saved
    assert "orders-clean.csv" in saved and "by Owner via the API" in saved
    resolved = await Event.filter(workspace_id=hub.workspace_id, type="interaction.resolved")
    assert [e.payload["via"] for e in resolved] == ["api"]


async def test_the_inbox_notebook_answers_every_card_type_by_button(
    hub: LiveHub, tmp_path: Path
) -> None:
    people = await person(hub)
    agent = await notebook_agent(people, tmp_path / "agent", name="Reporter")
    task = await running_task(people, agent, "Monthly reports")
    asked = cards()
    answers = {kind: asyncio.create_task(task.request_interaction(c)) for kind, c in asked.items()}
    client = notebook_client("inbox.ipynb", tmp_path)
    running = asyncio.create_task(client.async_execute())
    try:

        async def all_asked() -> bool:
            return await Interaction.filter(
                workspace_id=hub.workspace_id, status=InteractionStatus.PENDING
            ).count() == len(asked)

        await until(all_asked)
        ids = {kind: await _id_of(hub, card.title) for kind, card in asked.items()}

        async def of(kind: str, *classes: str) -> str:
            return await widget(client, f"lineup-card-{ids[kind]}", *classes)

        click(client, await of("approval", "lineup-option-approve"))
        click(client, await of("approval", "lineup-confirm"))  # high risk: confirm first
        click(client, await of("choice", "lineup-option-us"))
        set_value(client, await of("multi", "lineup-option-sales"), True)
        set_value(client, await of("multi", "lineup-option-staff"), True)
        click(client, await of("multi", "lineup-submit"))
        set_value(client, await of("input", "lineup-text"), "ada@example.com")
        click(client, await of("input", "lineup-submit"))
        click(client, await of("review", "lineup-option-request_changes"))

        got = {kind: await asyncio.wait_for(a, NOTEBOOK_TIMEOUT_S) for kind, a in answers.items()}
        await asyncio.wait_for(running, NOTEBOOK_TIMEOUT_S)
    finally:
        for job in (running, *answers.values()):
            if not job.done():
                job.cancel()
        await asyncio.gather(running, *answers.values(), return_exceptions=True)
        await agent.close()

    assert got["approval"].approved and got["choice"].option_id == "us"
    assert got["multi"].option_ids == ["sales", "staff"]
    assert got["input"].text == "ada@example.com"
    assert got["review"].option_id == "request_changes"
    assert {r.via for r in got.values()} == {"notebook"}
    resolved = await Event.filter(workspace_id=hub.workspace_id, type="interaction.resolved")
    assert sorted(e.payload["via"] for e in resolved) == ["notebook"] * len(asked)
    nbformat.write(client.nb, tmp_path / "inbox-run.ipynb")
    saved = outputs_text(client)
    assert "Traceback" not in saved, saved
    assert "Approve — by Owner via a notebook" in saved  # printed by the waiting cell
    assert "“ada@example.com” — by Owner via a notebook" in saved


async def _id_of(hub: LiveHub, title: str) -> str:
    for interaction in await Interaction.filter(workspace_id=hub.workspace_id):
        if interaction.payload.get("title") == title:
            return str(interaction.id)
    raise AssertionError(f"no card {title!r}")
