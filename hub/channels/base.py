"""The Channel contract: what a surface (built-in or plugin) implements.

A channel translates the outside world into calls of the core (``respond_to_interaction``)
and the core's cards and notices into its own rendering. It never decides anything itself.

Lifecycle, all on the hub's event loop:

1. **Construction** — ``Channel(context)`` right after discovery, before the database opens.
   Cheap: check settings, build clients; no network. A channel not configured
   (``configured(settings)`` is False) is never constructed.
2. ``blueprint()`` — optional Quart blueprint for the channel's own HTTP routes (link pages,
   a webhook endpoint), registered before serving.
3. ``await start()`` — once the database is open: connect, start polling. It may fail if
   its peer is away; the hub then logs the error and retries ``start`` in the background
   while notifications wait in the outbox.
4. ``await deliver_card(recipient, card)`` / ``await update_card(recipient, card)`` /
   ``await notify(recipient, notice)`` — called by the outbox worker, one at a time per
   process, possibly again for the same notification after a failure (make them
   idempotent where the surface allows). Raise any exception for a transient failure (it
   is retried with backoff); raise ``DeliveryRefused`` when retrying cannot help, and
   ``RetryLater`` when the peer said how long to wait (a 429's ``Retry-After``).
   ``deliver_card`` is only called while the card is pending; ``update_card`` once it is
   not (decided, expired, cancelled) on every surface that was sent it.
5. ``await stop()`` — at shutdown, after the outbox worker stopped: stop polling, close
   clients. Must return promptly even when the peer is unreachable.

Capabilities. A channel declares the card types it renders and how much text fits. What it
cannot render natively (``Capabilities.can_render``) it must show as a link to the web card
(``context.card_link``) — never a partial set of options or a truncated review that could
mislead a decision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from quart import Blueprint

from hub.channels.cards import Card, Notice
from hub.channels.invitations import InvitationMail
from hub.config import Settings
from hub.core.notify.outbox import DeliveryRefused, RetryLater
from hub.core.notify.preferences import EVENTS
from hub.protocol.interactions import InteractionType

__all__ = [
    "Capabilities",
    "Channel",
    "ChannelContext",
    "DeliveryRefused",
    "Recipient",
    "RetryLater",
]


@dataclass(frozen=True, slots=True)
class Capabilities:
    card_types: frozenset[InteractionType] = frozenset(InteractionType)
    multi_select: bool = True
    # Longest review content shown inline; longer goes behind a link to the web card.
    max_content_chars: int = 200_000
    updates_sent_cards: bool = True

    def can_render(self, card: Card) -> bool:
        if card.type not in self.card_types:
            return False
        if card.multiple and not self.multi_select:
            return False
        return len(card.content or "") <= self.max_content_chars


@dataclass(frozen=True, slots=True)
class Recipient:
    user_id: str
    email: str
    display_name: str
    language: str
    # The person's account on this surface (a Telegram chat), None for email.
    address: str | None = None
    external_id: str | None = None


async def _without_batches(*args: Any, **kwargs: Any) -> dict[str, Any]:
    raise NotImplementedError("this ChannelContext was built without respond_to_batch")


def _without_batch_links(*args: Any, **kwargs: Any) -> str:
    raise NotImplementedError("this ChannelContext was built without batch_link")


@dataclass
class ChannelContext:
    """What the hub hands a channel: settings, link signing, the one decision path."""

    settings: Settings
    # card_link(card, recipient, via=..., option_id=None, action_hash=None) → absolute URL of
    # a signed link; action_hash binds an answer through it to the action the message showed.
    card_link: Callable[..., str]
    # respond(card, recipient, response, via) → the resolved card; raises the core's errors.
    respond: Callable[..., Awaitable[Card]]
    # respond_to_batch(workspace_id, task_id, items, recipient, via) → {batchId, taskId,
    # items}: several cards of one task answered together, each as ``respond`` would answer
    # it; raises the core's errors. Keyword-only with a default: a context built without it
    # still builds (and refuses batches).
    respond_to_batch: Callable[..., Awaitable[dict[str, Any]]] = field(
        kw_only=True, default=_without_batches
    )
    # recipient(user_id, surface) → the Recipient as that surface reaches them.
    recipient: Callable[[str, str], Awaitable[Recipient]]
    # batch_link(batch_id, recipient, action=approve|reject|pick) → absolute URL of a signed
    # link answering the cards a batch message listed (``DeliveredBatch``), for a surface
    # that cannot hold the form itself (email).
    batch_link: Callable[..., str] = field(kw_only=True, default=_without_batch_links)
    extra: dict[str, Any] = field(default_factory=dict)


class Channel(ABC):
    """Subclass, set ``name`` and ``capabilities``, register under ``lineup.channels``."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities] = Capabilities()
    # Which events a person gets here until they say otherwise.
    default_events: ClassVar[frozenset[str]] = frozenset(EVENTS)
    # True when a person must link an account first (Telegram); email reaches everyone.
    needs_account: ClassVar[bool] = False
    # What the hub's operator sets for ``configured`` to be true, shown to people where the
    # surface is not set up ("LINEUP_TELEGRAM_BOT_TOKEN").
    set_up_with: ClassVar[str] = ""

    def __init__(self, context: ChannelContext) -> None:
        self.context = context

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        """Whether the settings turn this channel on."""
        return True

    @classmethod  # noqa: B027 - an optional hook
    async def check_settings(cls, settings: Settings) -> None:
        """Before ``lineup serve`` serves: ask the outside peer whether the settings are
        right, and raise ``ConfigurationError`` naming the setting it refuses. A peer that
        cannot be reached is no reason to stop: return, and ``start`` retries later."""

    def blueprint(self) -> Blueprint | None:
        return None

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Connect to the outside peer."""

    async def stop(self) -> None:  # noqa: B027 - optional hook
        """Disconnect; must not hang on an unreachable peer."""

    @abstractmethod
    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        """Send a pending card; render it or, if ``capabilities`` say no, link to it."""

    async def remind_card(self, recipient: Recipient, card: Card) -> None:
        """Remind the person of a pending card (its approval policy's reminder); default:
        send the card again. A surface that can point at the copy it sent may do that."""
        await self.deliver_card(recipient, card)

    async def update_card(self, recipient: Recipient, card: Card) -> None:  # noqa: B027
        """Turn the copy sent earlier read-only with the outcome; default: nothing to do
        (a surface that cannot change what it sent, like email, shows the outcome on its
        link page instead)."""

    @abstractmethod
    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        """Tell the person about a task event (e.g. the task failed)."""

    async def send_invitation(self, invitation: InvitationMail) -> None:
        """Send an invitation to join a workspace to its address; only a surface that
        reaches people without an account (email) can."""
        raise DeliveryRefused(f"the {self.name} channel cannot send invitations")
