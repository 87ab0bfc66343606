"""The SDK in a real Jupyter kernel: top-level ``await``, the connection in the background,
a cell waiting for a person's decision while the kernel's own event loop keeps running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hub.core.store.models import Interaction, InteractionStatus
from tests.sdk.live import LiveHub, live_hub


@pytest.fixture
async def hub(db: str, tmp_path: Path) -> AsyncIterator[LiveHub]:
    async with live_hub(db, tmp_path / "hub") as running:
        yield running


async def test_a_notebook_asks_a_person_with_top_level_await(hub: LiveHub, tmp_path: Path) -> None:
    code = await hub.pairing_code()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "from hub.sdk import Agent\n"
            f"agent = await Agent.connect({hub.url!r}, pairing_code={code!r}, "
            f"name='Notebook', state_dir={str(tmp_path / 'nb-state')!r})\n"
            "print('connected', agent.agent_id)"
        ),
        nbformat.v4.new_code_cell(
            "answer = await agent.request_approval('Retrain the model?', risk='medium')\n"
            "print('answer', answer.option_id, answer.via)"
        ),
        nbformat.v4.new_code_cell("await agent.close()\nprint('closed')"),
    ]
    client = NotebookClient(notebook, timeout=60, kernel_name="python3")

    async def person() -> None:
        async with asyncio.timeout(60):
            while True:
                card = await Interaction.filter(
                    workspace_id=hub.workspace_id, status=InteractionStatus.PENDING
                ).first()
                if card is not None:
                    await hub.respond(card.id, "approve")
                    return
                await asyncio.sleep(0.05)

    await asyncio.gather(client.async_execute(), person())
    outputs = ["".join(o.get("text", "") for o in cell.outputs) for cell in notebook.cells]
    assert outputs[0].startswith("connected agt_")
    assert outputs[1].startswith("answer approve")
    assert outputs[2].strip() == "closed"
