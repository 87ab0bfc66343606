"""Every kind of card answered on every surface, then read-only on every surface.

For each cell (a kind × the surface it is answered on): the agent asks the card over LAP;
it shows on every surface (the web page in Chromium, the mail the SMTP server received,
the Telegram message, the notebook inbox's widget); the surface refuses a wrong answer,
deciding nothing, then takes the person's answer; the agent hears that answer exactly once,
recorded ``via`` that surface; and every surface, the answering one included, then shows the
card decided by Ada via that surface and takes no other answer.
"""

from __future__ import annotations

import pytest

from tests.e2e.parity.kinds import KINDS
from tests.e2e.parity.stage import Stage
from tests.e2e.parity.surfaces import SURFACES, Surface

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.mark.parametrize("on", list(SURFACES))
@pytest.mark.parametrize("kind", list(KINDS))
async def test_answered_here_read_only_everywhere(
    stage: Stage, surfaces: dict[str, Surface], kind: str, on: str
) -> None:
    card = await stage.ask(KINDS[kind])
    for surface in surfaces.values():
        await surface.shown(card)

    await surfaces[on].answer(card)

    heard = await card.heard()
    assert heard.via == on
    expected = KINDS[kind].answer
    assert {k: heard.response.get(k) for k in expected} == expected
    for surface in surfaces.values():
        await surface.read_only(card, via=on)
    assert await stage.decisions(card.id) == 1
    late = await stage.ada.respond(stage.workspace_id, card.id, expected)
    assert late.status_code == 409 and late.json()["error"]["details"]["via"] == on
