"""The Feishu/Lark channel: cards as interactive message cards, answered in the chat.

Transport apart from dispatch: the long connection (``connection``; or Feishu posting to
``POST /feishu/card``) brings presses and messages in through the SDK's dispatcher
(``inbound``, where tokens and replays are checked); a link code sent to the bot links an
account (``linking``); presses become answers (``answers``, ``batches``: the core decides).
What is here sends the cards and notices, through the Open API (``api``), and redraws their
messages. Every message speaks the language of the person the card was sent to.

lark-oapi takes seconds to import (it loads every API it covers), so nothing here imports
it at module level: a hub without Feishu set up never pays for it, and one with Feishu
imports it in a worker thread (``loaded``, ``check_settings``), never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from quart import Blueprint, Response, request

from hub.channels.base import Capabilities, Channel, ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.config import Settings
from hub.core.errors import ConfigurationError
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

if TYPE_CHECKING:
    from hub.channels.feishu.api import FeishuApi
    from hub.channels.feishu.batches import BatchCards
    from hub.channels.feishu.inbound import Callback, Inbound, Reply
    from hub.channels.feishu.linking import LinkCodes
    from hub.channels.feishu.presses import Press

logger = logging.getLogger(__name__)

SURFACE = "feishu"
# Feishu's own domains open the bot's chat by this address; a hub pointed elsewhere (a
# local peer) gets Feishu's.
APPLINKS = {
    "https://open.larksuite.com": "https://applink.larksuite.com",
}
APPLINK = "https://applink.feishu.cn"
CARD_PATH = "/feishu/card"


@dataclass(frozen=True, slots=True)
class _Parts:
    """What the channel works with once lark-oapi is loaded."""

    api: FeishuApi
    batches: BatchCards
    links: LinkCodes
    inbound: Inbound

    @classmethod
    def build(cls, channel: FeishuChannel) -> _Parts:
        from hub.channels.feishu.answers import CardAnswers
        from hub.channels.feishu.api import FeishuApi
        from hub.channels.feishu.batches import BatchCards
        from hub.channels.feishu.inbound import Inbound
        from hub.channels.feishu.linking import LinkCodes

        settings = channel.context.settings
        api = FeishuApi(settings.feishu_app_id, settings.feishu_app_secret, settings.feishu_api_url)
        links = LinkCodes(api, settings.resolved_public_url)
        inbound = Inbound(
            settings.feishu_verification_token,
            settings.feishu_encrypt_key,
            on_press=CardAnswers(channel).on_press,
            on_text=links.on_text,
            on_late=channel.redraw,
        )
        inbound.hub_loop = asyncio.get_running_loop()
        return cls(api, BatchCards(api, channel.context), links, inbound)


class FeishuChannel(Channel):
    name = SURFACE
    needs_account = True
    set_up_with = "LINEUP_FEISHU_APP_ID"
    capabilities: ClassVar[Capabilities] = Capabilities(max_content_chars=3000)
    # The SDK reconnects by itself, but gives up for good on some refusals (its reconnect
    # loop ends on a ClientException, or after the tries Feishu allows): a connection down
    # this long is started anew, as often as it takes.
    restart_after_s: ClassVar[float] = 300.0
    watch_every_s: ClassVar[float] = 5.0

    def __init__(self, context: ChannelContext) -> None:
        super().__init__(context)
        self._parts: _Parts | None = None
        self._loading = asyncio.Lock()
        self.connection: Any = None
        self._watching: asyncio.Task[None] | None = None

    async def loaded(self) -> _Parts:
        """The channel's working parts, built once lark-oapi is imported: in a worker
        thread, so the hub serves meanwhile."""
        async with self._loading:
            if self._parts is None:
                await asyncio.to_thread(importlib.import_module, "lark_oapi")
                self._parts = _Parts.build(self)
            return self._parts

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        return bool(settings.feishu_app_id)

    @classmethod
    async def check_settings(cls, settings: Settings) -> None:
        """Feishu refusing the App ID or App Secret stops the start, naming the setting."""
        await asyncio.to_thread(importlib.import_module, "lark_oapi")
        from hub.channels.feishu.api import CredentialsRefused, FeishuApi

        api = FeishuApi(settings.feishu_app_id, settings.feishu_app_secret, settings.feishu_api_url)
        requests_log = logging.getLogger("httpx")
        level = requests_log.level
        requests_log.setLevel(logging.WARNING)  # a failed start is one line
        try:
            await api.tenant_token()
        except CredentialsRefused as refused:
            setting = (
                "LINEUP_FEISHU_APP_ID" if refused.code == 10003 else "LINEUP_FEISHU_APP_SECRET"
            )
            raise ConfigurationError(
                f"Invalid settings: {setting}: {settings.feishu_api_url} refused the app's "
                f"credentials ({refused.code}: {refused.message})",
                hint="Copy the App ID and App Secret from the app's Credentials & Basic Info "
                "page, and check LINEUP_FEISHU_API_URL (Feishu or Lark), then start again.",
            ) from None
        except Exception as error:  # away for now: the channel's start retries
            logger.warning("Feishu could not be asked about the app's credentials: %s", error)
        finally:
            requests_log.setLevel(level)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        parts = await self.loaded()
        from hub.channels.feishu.connection import LongConnection  # lark-oapi: loaded now

        await parts.api.tenant_token()  # the credentials work (a refusal names them)
        if self.connection is None:
            settings = self.context.settings
            self.connection = LongConnection(
                settings.feishu_app_id,
                settings.feishu_app_secret,
                settings.feishu_api_url,
                parts.inbound.dispatcher,
            )
        await self.connection.start()
        if self._watching is None:
            self._watching = asyncio.create_task(self._keep_connected())

    async def stop(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
            self._watching = None
        if self.connection is not None:
            await self.connection.stop()
            self.connection = None

    async def _keep_connected(self) -> None:
        loop = asyncio.get_running_loop()
        down_since: float | None = None
        while True:
            await asyncio.sleep(self.watch_every_s)
            if self.connection is None or self.connection.connected:
                down_since = None
                continue
            down_since = down_since or loop.time()
            if loop.time() - down_since < self.restart_after_s:
                continue
            logger.warning(
                "the Feishu long connection has been down for %.0fs: starting it again",
                loop.time() - down_since,
            )
            await self.connection.stop()
            try:
                await self.connection.start()
                down_since = None
            except Exception as error:  # still away: tried again after the same wait
                logger.warning("the Feishu long connection did not start again: %s", error)
                down_since = loop.time()

    def blueprint(self) -> Blueprint | None:
        """``POST /feishu/card``: card presses posted by Feishu, for a hub it can reach."""
        blueprint = Blueprint("feishu_callbacks", __name__)

        @blueprint.post(CARD_PATH)
        async def card() -> Response:
            inbound = (await self.loaded()).inbound
            posted = await request.get_data(as_text=False)
            raw = posted if isinstance(posted, bytes) else posted.encode()
            body, status = await inbound.answer_http(dict(request.headers), raw)
            return Response(body, status=status, content_type="application/json")

        return blueprint

    async def deep_link(self, token: str) -> str:
        """Where the person opens the chat with the bot, to send it the code (``token``)."""
        settings = self.context.settings
        root = APPLINKS.get(settings.feishu_api_url, APPLINK)
        return f"{root}/client/bot/open?appId={settings.feishu_app_id}"

    # --- delivery -------------------------------------------------------------------------

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        parts = await self.loaded()
        row = await self._row_for(recipient, card)
        if not row.external_id:
            with speaking(recipient.language):
                message = self.draw(row, card, recipient)
            # The uuid makes Feishu send it once, should the answer to a send be lost.
            sent = await parts.api.send_card(
                recipient.address or "", message, uuid=f"card-{row.id}"
            )
            # Only these columns: a press on the new message may already have saved its state.
            await DeliveredCard.filter(id=row.id).update(
                address=sent.chat_id, external_id=sent.message_id, updated_at=utcnow()
            )
        await parts.batches.offer(recipient, card)

    async def remind_card(self, recipient: Recipient, card: Card) -> None:
        """A reply to the card already in the chat; the card itself when it was never sent."""
        from hub.channels.feishu.render import text_message

        parts = await self.loaded()
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            await self.deliver_card(recipient, card)
            return
        with speaking(recipient.language):
            said = _("⏰ Reminder: “%(title)s” still waits for your answer.", title=card.title)
        # No uuid: a second reminder is not a repeat of the first.
        await parts.api.send_card(row.address, text_message(said))

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        parts = await self.loaded()
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            return
        with speaking(recipient.language):
            await parts.api.patch_card(row.external_id, self.draw(row, card, recipient))
        if not card.is_pending:
            await parts.batches.refresh(recipient, card)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        from hub.channels.feishu.render import notice_message

        parts = await self.loaded()
        base = self.context.settings.resolved_public_url
        url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        with speaking(recipient.language):
            message = notice_message(notice, url)
        uuid = _uuid(notice.kind, notice.task_id, recipient.user_id)
        await parts.api.send_card(recipient.address or "", message, uuid=uuid)

    # --- what answering needs (answers.CardMessages) --------------------------------------

    def draw(self, row: DeliveredCard, card: Card, recipient: Recipient) -> dict[str, Any]:
        from hub.channels.feishu.render import card_message

        web_link = self.context.card_link(card, recipient, via="web")
        message, _native = card_message(
            card,
            row.id,
            {**row.state, "viewer": row.user_id},
            self.capabilities,
            web_link=web_link,
        )
        return message

    async def redraw(self, message_id: str, card: dict[str, Any]) -> None:
        try:
            await (await self.loaded()).api.patch_card(message_id, card)
        except Exception:  # the outbox's update of the decision follows anyway
            logger.warning("redrawing a pressed Feishu card failed", exc_info=True)

    async def on_batch_press(self, callback: Callback, press: Press) -> Reply:
        return await (await self.loaded()).batches.on_press(callback, press)

    async def _row_for(self, recipient: Recipient, card: Card) -> DeliveredCard:
        row = await _sent_row(recipient, card)
        if row is None:
            state: dict[str, Any] = {}
            if card.action is not None:  # what every answer from this message binds to
                state["actionHash"] = card.action_hash
            now = utcnow()
            row = await DeliveredCard.create(
                id=secrets.token_urlsafe(6),
                surface=SURFACE,
                user_id=recipient.user_id,
                workspace_id=card.workspace_id,
                interaction_id=card.id,
                state=state,
                created_at=now,
                updated_at=now,
            )
        return row


async def _sent_row(recipient: Recipient, card: Card) -> DeliveredCard | None:
    return await DeliveredCard.filter(
        surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
    ).first()


def _uuid(*parts: str) -> str:
    """A send's idempotency key (Feishu takes at most 50 characters)."""
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:40]
