"""What every surface is: the steps a parity test takes on it (``Surface``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import ClassVar

from hub.sdk.display import VIA_WORDS
from tests.e2e.parity.stage import Asked, Stage

Fire = Callable[[], Awaitable[None]]


TERMINAL = "terminal"  # the ``via`` of an answer at the MCP agent's terminal


def said(via: str) -> str:
    """How every surface's outcome sentence names ``via`` ("by Ada via Telegram")."""
    return VIA_WORDS.get(via, via)


def outcome(via: str, who: str = "Ada") -> str:
    """What every surface's copy of a decided card says: who decided through which surface
    ("by Ada via Telegram"), or, answered at the agent's terminal (the card withdrawn in the
    hub, its answer beside it), that it was."""
    return "Answered in the terminal" if via == TERMINAL else f"by {who} via {said(via)}"


class Surface(ABC):
    name: ClassVar[str]  # the ``via`` an answer given here is recorded with
    # The ``via`` of an edited action: a surface that edits behind a link to the web's form
    # records ``web``.
    edits_via: ClassVar[str] = ""
    # The extras (``edit``, ``quorum``) the surface cannot answer, each with why; its
    # methods for them prove the limit instead, and the parity table says so.
    cannot: ClassVar[dict[str, str]] = {}

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    @abstractmethod
    async def shown(self, card: Asked) -> None:
        """Wait until ``card`` shows here, answerable."""

    @abstractmethod
    async def answer(self, card: Asked) -> None:
        """Give ``card.kind.wrong`` (refused, nothing decided), then ``card.kind.answer``."""

    @abstractmethod
    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        """``card`` shows here as decided by ``who`` via ``via``, and takes no answer."""

    @abstractmethod
    async def ready(self, card: Asked) -> Fire:
        """Everything short of the last press of ``card.kind.answer``; returns that press."""

    @abstractmethod
    async def answer_edited(self, card: Asked) -> None:
        """Approve ``card``'s action with ``card.kind.answer["action"]`` changed."""

    @abstractmethod
    async def vote(self, card: Asked) -> None:
        """Approve a quorum card: a vote; the copy here then says the vote stands."""

    @abstractmethod
    async def votes_shown(self, card: Asked, approvals: int) -> None:
        """The quorum card shows ``approvals`` of its 2 approvals so far."""

    @abstractmethod
    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        """Answer the task's approvals ``cards`` together: "approve all" when every pick is
        ``approve``, else item by item, each its pick."""

    async def told(self, card: Asked, winner: str) -> None:  # noqa: B027 - optional
        """After a race: what this surface's last press was answered, when ``winner``
        (another surface) decided first; a surface whose copy only turns read-only has
        nothing more to check than ``read_only``."""

    async def prepared(self) -> None:  # noqa: B027 - optional
        """Called once per module after the stage is up."""
