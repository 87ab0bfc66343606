"""Running a notebook on a real kernel (nbclient + ipykernel) and pressing its widgets the
way a browser does: comm messages on the kernel's shell channel (jupyter_client)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "notebooks"
CELL_TIMEOUT_S = 90


def notebook_client(name: str, workdir: Path) -> NotebookClient:
    notebook = nbformat.read(EXAMPLES / name, as_version=4)
    return NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )


def widgets_with(client: NotebookClient, *classes: str) -> list[str]:
    """The comm ids of the widgets (seen so far) that carry every CSS class given."""
    return [
        model_id
        for model_id, state in dict(client.widget_state).items()
        if set(classes) <= set(state.get("_dom_classes") or ())
    ]


async def widget(client: NotebookClient, *classes: str, within_s: float = 30.0) -> str:
    """The comm id of the one widget with ``classes``, once the kernel has opened it."""
    async with asyncio.timeout(within_s):
        while not (found := widgets_with(client, *classes)):  # noqa: ASYNC110 - kernel state
            await asyncio.sleep(0.05)
    assert len(found) == 1, found
    return found[0]


async def state_of(
    client: NotebookClient, comm_id: str, key: str, holds: Any, within_s: float = 30.0
) -> Any:
    """The widget's ``key`` once ``holds(value)`` is true: the kernel's updates reach the
    client over iopub on their own schedule."""
    async with asyncio.timeout(within_s):
        while not holds(value := client.widget_state[comm_id].get(key)):  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    return value


def _send(client: NotebookClient, comm_id: str, data: dict[str, Any]) -> None:
    assert client.kc is not None
    message = client.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    client.kc.shell_channel.send(message)


def click(client: NotebookClient, comm_id: str) -> None:
    """What the browser sends when a person presses a Button."""
    _send(client, comm_id, {"method": "custom", "content": {"event": "click"}})


def set_value(client: NotebookClient, comm_id: str, value: Any) -> None:
    """What the browser sends when a person types into a field or ticks a box."""
    _send(client, comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})


def outputs_text(client: NotebookClient) -> str:
    """Every text output the saved notebook holds, in order."""
    parts: list[str] = []
    for cell in client.nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(str(output.get("text", "")))
            elif output.get("output_type") in ("execute_result", "display_data"):
                data = output.get("data", {})
                parts.append(str(data.get("text/html") or data.get("text/plain") or ""))
            elif output.get("output_type") == "error":
                parts.append("\n".join(output.get("traceback", [])))
    return "\n".join(parts)
