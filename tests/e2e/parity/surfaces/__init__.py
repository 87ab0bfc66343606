"""Each surface a person answers cards on, acted on as the person would, over real sockets.

A surface is one class: it finds a card where it shows (``shown``), answers it the way a
person does there (``answer``, after an answer it must refuse), and checks that a decided
card is read-only there, naming who decided and through which surface (``read_only``); the
extras (an edited action, a quorum vote, a batch) and the race (``ready``: everything short
of the last press, which it returns) are methods of the same class. ``SURFACES`` is the table
the suites are parametrised over.

How to add a surface:

1. Write a module here with one subclass of ``base.Surface``: ``name`` is the ``via`` the
   hub records for an answer given on it (outcome sentences name it as ``base.said`` does:
   the hub's words for its own surfaces, a plugin's name as it is).
2. Implement ``shown``, ``answer``, ``read_only`` and ``ready`` for the five kinds of
   ``tests.e2e.parity.kinds``; ``answer_edited``, ``vote`` / ``votes_shown`` and
   ``answer_batch`` for the extras; ``told`` if a losing press of a race is answered. Drive
   the real client or peer the surface speaks to (the MCP SDK's client answering an
   elicitation; a local Slack or Feishu API server in ``tests/channels/peers.py`` style),
   started in ``tests.e2e.parity.stage.staged`` beside the others; assert what the person
   would see there, never the hub's database.
3. Add the class to ``SURFACES`` below. Every cell of both suites then runs for it, and
   ``docs/channels.md``'s parity table gets a column: the test ids name the cells.
4. A surface that cannot do something natively (edit an action in a chat, say) does it the
   way it sends people to (its signed link to the web form), sets ``edits_via`` or says
   so in its docstring, and the table's footnote says so. One that cannot do it at all
   names it in ``cannot`` with why (the terminal: an edit, a quorum vote); its methods
   then prove the limit, and the table's cell says "not offered".
"""

from __future__ import annotations

import asyncio
import random

from tests.e2e.parity.surfaces.base import Fire, Surface, outcome, said
from tests.e2e.parity.surfaces.feishu import Feishu
from tests.e2e.parity.surfaces.mail import Email
from tests.e2e.parity.surfaces.mcp import Mcp
from tests.e2e.parity.surfaces.notebook import Notebook
from tests.e2e.parity.surfaces.slack import Slack
from tests.e2e.parity.surfaces.telegram import Telegram
from tests.e2e.parity.surfaces.web import Web

SURFACES: dict[str, type[Surface]] = {
    surface.name: surface for surface in (Web, Email, Telegram, Notebook, Mcp, Slack, Feishu)
}


async def race(fires: dict[str, Fire], first: str) -> None:
    """Every surface's last press within the same few milliseconds: ``first`` at once, the
    others in a random order after it (the surfaces' own latencies differ by tens of
    milliseconds, so each surface's turn at going first lets each of them win some)."""

    async def after_a_moment(name: str, fire: Fire) -> None:
        if name != first:
            await asyncio.sleep(random.uniform(0, 0.05))
        await fire()

    await asyncio.gather(*(after_a_moment(name, fire) for name, fire in fires.items()))


__all__ = [
    "SURFACES",
    "Email",
    "Feishu",
    "Fire",
    "Mcp",
    "Notebook",
    "Slack",
    "Surface",
    "Telegram",
    "Web",
    "outcome",
    "race",
    "said",
]
