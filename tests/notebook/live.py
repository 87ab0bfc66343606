"""A live hub for the notebook tests, and the person's notebook client on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hub.notebook import Hub
from hub.protocol.interactions import InteractionCard
from hub.sdk import Agent, Backoff, Task
from tests.sdk.live import LiveHub


def token_of(hub: LiveHub) -> str:
    return str(hub.http.headers["Authorization"]).partition(" ")[2]


async def person(hub: LiveHub) -> Hub:
    return await Hub.connect(hub.url, token=token_of(hub))


async def notebook_agent(people: Hub, state_dir: Path, name: str = "Notebook job") -> Agent:
    return await people.register_agent(
        name, state_dir=state_dir, backoff=Backoff(initial_s=0.05, maximum_s=0.5)
    )


async def running_task(people: Hub, agent: Agent, title: str = "Clean the table") -> Task:
    task = await people.assign(agent, title)
    await task.accept()
    return task


def cards() -> dict[str, InteractionCard]:
    """One card of each type (and a multi-select choice), as an agent would ask them."""
    return {
        "approval": InteractionCard.model_validate(
            {
                "type": "approval",
                "title": "Drop the <b>staging</b> table?",
                "description": "It holds <script>alert(1)</script> rows.",
                "impact": "Staging is rebuilt tonight.",
                "risk": "high",
                "details": {"rows": 1200},
            }
        ),
        "choice": InteractionCard.model_validate(
            {
                "type": "choice",
                "title": "Which region?",
                "options": [
                    {"id": "eu", "label": "Europe"},
                    {"id": "us", "label": "United States"},
                ],
            }
        ),
        "multi": InteractionCard.model_validate(
            {
                "type": "choice",
                "title": "Which reports?",
                "multiple": True,
                "minSelections": 1,
                "maxSelections": 2,
                "options": [
                    {"id": "sales", "label": "Sales"},
                    {"id": "stock", "label": "Stock"},
                    {"id": "staff", "label": "Staff"},
                ],
            }
        ),
        "input": InteractionCard.model_validate(
            {"type": "input", "title": "Who gets the report?", "input": {"format": "email"}}
        ),
        "review": InteractionCard.model_validate(
            {
                "type": "review",
                "title": "Review the cleaning rules",
                "content": "drop rows where amount < 0\n<iframe src=x>",
            }
        ),
    }


async def until(check: Callable[[], Awaitable[bool]], within_s: float = 30.0) -> None:
    async with asyncio.timeout(within_s):
        while not await check():  # noqa: ASYNC110 - the state is in another process
            await asyncio.sleep(0.05)


def as_dict(value: Any) -> dict[str, Any]:
    return dict(value)
