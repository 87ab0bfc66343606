"""Running the channels inside the hub: a ``lineup.plugins`` plugin like any other.

``init_app`` discovers the channels (``hub.channels.registry``), constructs the configured
ones, registers their blueprints and the link pages, and while the hub serves:

* declares each channel's surface to the preferences, so notifications get written for it,
  and names the channels it has but the settings do not turn on, so people see them as not
  set up instead of ticked;
* starts each channel (retrying in the background when its peer is away at start);
* runs one outbox worker whose deliverer hands each row to its channel, woken by every
  committed event on the bus.

``ChannelRuntime`` is also what a channel receives, through ``ChannelContext``, to answer a
card: ``respond`` is the one decision path (``respond_to_interaction``) plus a membership
check, ``respond_to_batch`` the same for several cards of a task at once
(``respond_to_batch`` of ``hub.core.work.batch_answers``), and ``card_link`` signs links to
the web card.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator
from datetime import timedelta
from typing import Any

from quart import Quart

from hub.channels import batch_pages, pages
from hub.channels.base import Channel, ChannelContext, DeliveryRefused, Recipient
from hub.channels.cards import Card, build_card, load_card, load_notice
from hub.channels.invitations import load_invitation_mail
from hub.channels.links import LinkSigner
from hub.channels.registry import available_channels
from hub.config import Settings
from hub.core.approvals.permissions import may_answer
from hub.core.errors import Conflict
from hub.core.log.bus import DEFAULT_BUS, PublishedEvent
from hub.core.notify.channel_accounts import create_link_token
from hub.core.notify.notifications import may_enqueue
from hub.core.notify.outbox import OutboxWorker, Outcome, RetryPolicy
from hub.core.notify.preferences import (
    Surface,
    declare_surface,
    declare_surface_not_set_up,
    settings_for,
    withdraw_surface,
)
from hub.core.people.accounts import require_membership
from hub.core.store.models import User
from hub.core.store.notification_models import ChannelAccount, Notification, NotificationKind
from hub.core.work import batch_answers
from hub.core.work.interactions import respond_to_interaction
from hub.host.readiness import forget_worker, watch_worker
from hub.host.settings import settings_of
from hub.protocol.clock import iso

logger = logging.getLogger(__name__)

EXTENSION = "lineup.channels"  # app.extensions[EXTENSION]: the ChannelRuntime
_RUNNING: weakref.WeakSet[ChannelRuntime] = weakref.WeakSet()
_LISTENING = False


def _wake_workers(event: PublishedEvent) -> None:
    if not may_enqueue(event.type):
        return
    for runtime in list(_RUNNING):
        runtime.worker.wake()


class ChannelRuntime:
    def __init__(
        self,
        settings: Settings,
        channel_classes: dict[str, type[Channel]] | None = None,
        *,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.signer = LinkSigner(settings.secret_key, settings.resolved_public_url)
        self.context = ChannelContext(
            settings=settings,
            card_link=self.card_link,
            respond=self.respond,
            respond_to_batch=self.respond_to_batch,
            recipient=self.recipient_by_id,
            batch_link=self.batch_link,
        )
        classes = available_channels() if channel_classes is None else channel_classes
        self.channels: dict[str, Channel] = {
            name: cls(self.context) for name, cls in classes.items() if cls.configured(settings)
        }
        # What the operator would set for each channel this hub has but did not set up.
        self.not_set_up: dict[str, str] = {
            name: cls.set_up_with for name, cls in classes.items() if name not in self.channels
        }
        self.worker = OutboxWorker(self.deliver, retry=retry, lease_s=settings.outbox_lease_s)
        self._starting: list[asyncio.Task[None]] = []

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        global _LISTENING
        for name in self.not_set_up:
            declare_surface_not_set_up(name)
        for name, channel in self.channels.items():
            declare_surface(
                Surface(
                    name,
                    defaults=channel.default_events,
                    needs_account=channel.needs_account,
                    card_after=timedelta(seconds=self.settings.notify_after_s),
                )
            )
            self._starting.append(asyncio.create_task(self._start_channel(name, channel)))
        _RUNNING.add(self)
        if not _LISTENING:
            DEFAULT_BUS.add_listener(_wake_workers)
            _LISTENING = True
        self.worker.start()

    async def _start_channel(self, name: str, channel: Channel) -> None:
        delay = 1.0
        while True:
            try:
                await channel.start()
                logger.info("channel %s started", name)
                return
            except Exception as error:  # its peer may be away; notifications wait meanwhile
                logger.warning("channel %s did not start (%s); retry in %.0fs", name, error, delay)
                await asyncio.sleep(delay)
                delay = min(60.0, delay * 2)

    async def stop(self) -> None:
        _RUNNING.discard(self)
        await self.worker.stop()
        for task in self._starting:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._starting.clear()
        for name, channel in self.channels.items():
            try:
                await channel.stop()
            except Exception:
                logger.exception("channel %s did not stop cleanly", name)
            withdraw_surface(name)
        for name in self.not_set_up:
            withdraw_surface(name)

    # --- delivery -------------------------------------------------------------------------

    async def recipient(self, user: User, surface: str) -> Recipient:
        settings = await settings_for(user.id)
        account = await ChannelAccount.filter(user_id=user.id, surface=surface).first()
        return Recipient(
            user_id=user.id,
            email=user.email,
            display_name=user.display_name,
            language=settings.language or "en",
            address=account.address if account else None,
            external_id=account.external_id if account else None,
        )

    async def recipient_by_id(self, user_id: str, surface: str) -> Recipient:
        return await self.recipient(await User.get(id=user_id), surface)

    async def deliver(self, row: Notification) -> Outcome:
        """The outbox's deliverer: one row to its channel."""
        channel = self.channels.get(row.surface)
        if channel is None:
            raise DeliveryRefused(f"the {row.surface} channel is not configured")
        if row.kind == NotificationKind.INVITED:
            invitation = await load_invitation_mail(
                row.invitation_id or "",
                secret_key=self.settings.secret_key,
                public_url=self.settings.resolved_public_url,
            )
            if invitation is None:  # accepted, revoked or expired before it went out
                return Outcome.SKIPPED
            await channel.send_invitation(invitation)
            return Outcome.SENT
        user = await User.filter(id=row.user_id).first()
        if user is None:
            return Outcome.SKIPPED
        recipient = await self.recipient(user, row.surface)
        if channel.needs_account and recipient.address is None:
            raise DeliveryRefused(f"{user.id} has no {row.surface} account linked any more")
        if row.kind == NotificationKind.FAILED:
            notice = await load_notice("failed", row.workspace_id, row.task_id or "")
            if notice is None:
                return Outcome.SKIPPED
            await channel.notify(recipient, notice)
            return Outcome.SENT
        card = await load_card(row.workspace_id, row.interaction_id or "")
        if card is None:
            return Outcome.SKIPPED
        if row.kind in (NotificationKind.WAITING, NotificationKind.REMINDER):
            if not card.is_pending:  # decided before it went out: nothing to ask any more
                return Outcome.SKIPPED
            if not await may_answer(row.workspace_id, user.id):  # made a viewer, or left
                return Outcome.SKIPPED
            if row.kind == NotificationKind.REMINDER:
                await channel.remind_card(recipient, card)
            else:
                await channel.deliver_card(recipient, card)
        elif channel.capabilities.updates_sent_cards:
            await channel.update_card(recipient, card)
        else:  # e.g. a mail: its link pages show the outcome instead
            return Outcome.SKIPPED
        return Outcome.SENT

    # --- what channels call ---------------------------------------------------------------

    def card_link(
        self,
        card: Card,
        recipient: Recipient,
        *,
        via: str,
        option_id: str | None = None,
        action_hash: str | None = None,
    ) -> str:
        return self.signer.url(
            workspace_id=card.workspace_id,
            interaction_id=card.id,
            user_id=recipient.user_id,
            address=recipient.email,
            via=via,
            option_id=option_id,
            action_hash=action_hash,
        )

    def batch_link(self, batch_id: str, recipient: Recipient, *, action: str) -> str:
        return self.signer.batch_url(
            batch_id=batch_id, user_id=recipient.user_id, address=recipient.email, action=action
        )

    async def respond(
        self,
        card: Card,
        recipient: Recipient,
        response: dict[str, Any],
        *,
        via: str,
        idempotency_key: str | None = None,
    ) -> Card:
        """Answer ``card`` as ``recipient`` through the core's one decision path; the same
        ``idempotency_key`` again returns the first answer instead of deciding twice."""
        user = await _member(recipient, card.workspace_id)
        interaction = await respond_to_interaction(
            card.workspace_id,
            card.id,
            response,
            responder=f"user:{user.id}",
            via=via,
            idempotency_key=idempotency_key,
        )
        return await build_card(interaction)

    async def respond_to_batch(
        self,
        workspace_id: str,
        task_id: str,
        items: list[batch_answers.BatchItem],
        recipient: Recipient,
        *,
        via: str,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Answer several cards of task ``task_id`` as ``recipient``, each item through the
        same decision path as ``respond``: ``{batchId, taskId, items: [outcome]}``; the same
        ``idempotency_key`` again is the same batch, deciding nothing twice."""
        user = await _member(recipient, workspace_id)
        return await batch_answers.respond_to_batch(
            workspace_id,
            task_id,
            items,
            responder=f"user:{user.id}",
            via=via,
            idempotency_key=idempotency_key,
        )

    async def link_account(self, user_id: str, surface: str) -> dict[str, Any]:
        """A one-time link for ``user_id`` to link their account on ``surface`` (Telegram,
        Slack):
        ``{token, url, expiresAt}``. The Settings page and the API both show this.

        Raises ``Conflict`` (``<surface>_not_configured``) when the surface is not running
        or cannot link accounts."""
        channel = self.channels.get(surface)
        deep_link = getattr(channel, "deep_link", None)
        if channel is None or deep_link is None:
            raise Conflict(
                f"{surface.capitalize()} is not set up on this hub.",
                code=f"{surface}_not_configured",
                hint=f"Set {self.not_set_up.get(surface) or 'its settings'} (docs/channels.md), "
                "then restart the hub.",
            )
        token, expires_at = await create_link_token(user_id, surface)
        return {"token": token, "url": await deep_link(token), "expiresAt": iso(expires_at)}


async def check_channel_settings(settings: Settings) -> None:
    """``Channel.check_settings`` of each channel the settings turn on, before the hub
    serves: a setting its peer refuses stops the start with a line naming it."""
    for cls in available_channels().values():
        if cls.configured(settings):
            await cls.check_settings(settings)


async def _member(recipient: Recipient, workspace_id: str) -> User:
    """The person answering, once it is known they still belong to the workspace: a card
    or link sent earlier may reach someone who has since left it."""
    user = await User.get(id=recipient.user_id)
    await require_membership(user, workspace_id)
    return user


def runtime_of(app: Quart) -> ChannelRuntime:
    runtime: ChannelRuntime = app.extensions[EXTENSION]
    return runtime


def init_app(app: Quart) -> None:
    settings: Settings = settings_of(app)
    runtime = ChannelRuntime(settings)
    app.extensions[EXTENSION] = runtime
    pages.init_app(app, runtime)
    batch_pages.init_app(app)
    for channel in runtime.channels.values():
        blueprint = channel.blueprint()
        if blueprint is not None:
            app.register_blueprint(blueprint)

    @app.while_serving
    async def _channels() -> AsyncGenerator[None, None]:
        await runtime.start()
        watch_worker(app, "outbox", lambda: runtime.worker.running)
        yield
        forget_worker(app, "outbox")
        await runtime.stop()
