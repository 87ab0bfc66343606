"""Every surface answers the same card at once: exactly one decision, every time.

Fifty races, ten of each kind of card. In each, every surface first does all but the last
step (the page is open and filled in, the mail's link page fetched, the boxes ticked in
Telegram, the notebook's fields set, the terminal's form shown); then the last presses go
out within the same few milliseconds (each surface in turn first, the others after it in a
random order). The card is decided once (one ``interaction.resolved``, or one withdrawal
for an answer at the terminal; one decision returned to the agent's tool call), the
surface that won recorded as ``via`` and showing it, and every other surface told who
decided first.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from tests.e2e.parity.kinds import KINDS
from tests.e2e.parity.stage import Stage
from tests.e2e.parity.surfaces import Surface, race

pytestmark = [pytest.mark.asyncio(loop_scope="package"), pytest.mark.same_on_every_database]

RACES = 50
WINNERS: Counter[str] = Counter()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", list(KINDS))
async def test_every_surface_at_once_decides_once(
    stage: Stage, surfaces: dict[str, Surface], kind: str
) -> None:
    for run in range(RACES // len(KINDS)):
        card = await stage.ask(KINDS[kind])
        ready = await asyncio.gather(*(surface.ready(card) for surface in surfaces.values()))
        await race(
            dict(zip(surfaces, ready, strict=True)), first=list(surfaces)[run % len(surfaces)]
        )

        heard = await card.heard()
        assert heard.via in surfaces
        WINNERS[heard.via] += 1
        losers = [surface for name, surface in surfaces.items() if name != heard.via]
        await asyncio.gather(*(surface.told(card, winner=heard.via) for surface in losers))
        # Read-only everywhere afterwards is each cell's of test_every_card_everywhere;
        # here the winner's own copy says it decided.
        await surfaces[heard.via].read_only(card, via=heard.via)
        assert await stage.decisions(card.id) == 1
        assert stage.frames[card.id] == 1
        # The task ends once its card is answered: its events would redraw the next race's
        # page under its press.
        await stage.finished(card.task_id)
    print(f"winners so far: {dict(WINNERS)}")
