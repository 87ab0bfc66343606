"""The Slack channel: cards as Block Kit messages in a person's conversation with the app.

Transport apart from dispatch: Slack's interactions and events arrive over Socket Mode
(``LINEUP_SLACK_APP_TOKEN``: no public URL needed) or as signed posts to
``/slack/interactivity`` and ``/slack/events`` (``LINEUP_SLACK_SIGNING_SECRET``); both feed
the same handlers: a direct message with a code links an account (``linking``), presses and
modal submissions become answers (``answers``: the core decides). What is here sends the
cards and notices through the Web API (``LINEUP_SLACK_API_URL``) and redraws their
messages. Every message speaks the language of the person it is for.

Never doubled: each card's message carries its delivery's opaque id as Slack message
metadata. A delivery tried again after an attempt whose answer was lost first looks for
that message in the conversation (``conversations.history``) and keeps it instead of
posting a second one.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import datetime
from typing import Any, ClassVar

from quart import Blueprint
from slack_sdk.errors import SlackApiError

from hub.channels.base import Capabilities, Channel, ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.slack.answers import SlackAnswers
from hub.channels.slack.batches import BatchMessages
from hub.channels.slack.blocks import card_blocks, escape, fallback_text, notice_blocks
from hub.channels.slack.endpoints import slack_blueprint
from hub.channels.slack.inbound import Inbound
from hub.channels.slack.linking import DirectMessages
from hub.channels.slack.modals import can_edit_here
from hub.channels.slack.signatures import RequestCheck
from hub.channels.slack.socket_mode import SocketModeConnection
from hub.channels.slack.submissions import ModalSubmissions
from hub.channels.slack.web_api import SlackApi
from hub.config import Settings
from hub.core.errors import ConfigurationError
from hub.core.store.notification_models import DeliveredCard
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.clock import utcnow

logger = logging.getLogger(__name__)
SURFACE = "slack"
METADATA_TYPE = "lineup_card"  # the event_type of the metadata each card message carries
HISTORY_LOOKBACK = 50  # messages searched for a card whose post's answer was lost
CHECK_WITHIN_S = 15.0  # asking Slack about the tokens before serving, at most


class SlackChannel(Channel):
    name = SURFACE
    needs_account = True
    set_up_with = "LINEUP_SLACK_BOT_TOKEN, LINEUP_SLACK_APP_TOKEN"
    # Slack's text objects hold 3000 characters; a longer review links to the web card.
    capabilities: ClassVar[Capabilities] = Capabilities(max_content_chars=2900)
    # How often the Socket Mode client checks its connection (and reconnects).
    ping_interval_s: ClassVar[float] = 10.0

    def __init__(self, context: ChannelContext) -> None:
        super().__init__(context)
        settings = context.settings
        self._api = SlackApi(settings.slack_bot_token, settings.slack_api_url)
        self._batches = BatchMessages(self._api, context)
        answers = SlackAnswers(self)
        submissions = ModalSubmissions(answers)

        async def on_interaction(payload: dict[str, Any]) -> dict[str, Any] | None:
            if payload.get("type") == "view_submission":
                return await submissions.on_submission(payload)
            if payload.get("type") == "block_actions":
                await answers.on_press(payload)
            return None

        direct = DirectMessages(self._api, settings.resolved_public_url)
        self.inbound = Inbound(on_interaction, direct.on_event)
        self.socket: SocketModeConnection | None = None
        if settings.slack_app_token:
            self.socket = SocketModeConnection(
                settings.slack_app_token,
                settings.slack_api_url,
                self.inbound,
                ping_interval_s=self.ping_interval_s,
            )
        self.check = (
            RequestCheck(settings.slack_signing_secret) if settings.slack_signing_secret else None
        )
        self.identity: dict[str, Any] = {}

    @classmethod
    def configured(cls, settings: Settings) -> bool:
        return bool(settings.slack_bot_token)

    @classmethod
    async def check_settings(cls, settings: Settings) -> None:
        """Before serving: a token Slack refuses stops the start in one line naming it. An
        unreachable Slack is no reason to stop (``start`` retries)."""
        api = SlackApi(settings.slack_bot_token, settings.slack_api_url)
        asks = [("LINEUP_SLACK_BOT_TOKEN", "auth_test", {})]
        if settings.slack_app_token:
            opening = {"app_token": settings.slack_app_token}
            asks.append(("LINEUP_SLACK_APP_TOKEN", "apps_connections_open", opening))
        for setting, method, params in asks:
            try:
                async with asyncio.timeout(CHECK_WITHIN_S):
                    await api.call(method, **params)
            except SlackApiError as error:
                refused = _refused_setting(error, setting)
                if isinstance(refused, ConfigurationError):
                    raise refused from None
                return  # Slack answered something else: the start will tell
            except Exception as error:  # away, slow, answering 5xx: the start tries again
                logger.info("Slack could not be asked about %s before serving: %s", setting, error)
                return

    @property
    def api(self) -> SlackApi:
        return self._api

    @property
    def batches(self) -> BatchMessages:
        return self._batches

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        # Who the bot is (and that Slack takes its token): the link to its conversation.
        try:
            self.identity = await self.api.call("auth_test")
        except SlackApiError as error:
            raise _refused_setting(error, "LINEUP_SLACK_BOT_TOKEN") from error
        if self.socket is not None:
            try:
                await self.socket.start()
            except SlackApiError as error:
                raise _refused_setting(error, "LINEUP_SLACK_APP_TOKEN") from error

    async def stop(self) -> None:
        if self.socket is not None:
            await self.socket.stop()
        await self.inbound.stop()

    def blueprint(self) -> Blueprint | None:
        """With a signing secret, the endpoints Slack posts to (``endpoints``)."""
        if self.check is None:
            return None
        return slack_blueprint(self.check, self.inbound)

    async def deep_link(self, token: str) -> str:
        """Where to send the code: the app's conversation in Slack (``app_redirect``)."""
        if not self.identity:
            try:
                self.identity = await self.api.call("auth_test")
            except Exception as error:  # the code works without the shortcut
                logger.info("Slack's auth.test failed: %s", error)
                return "https://slack.com/"
        team = self.identity.get("team_id") or ""
        bot_id = self.identity.get("bot_id") or ""
        app = ""
        if bot_id:
            try:
                app = ((await self.api.call("bots_info", bot=bot_id)).get("bot") or {}).get(
                    "app_id"
                ) or ""
            except Exception as error:  # the code works without the shortcut
                logger.info("Slack's bots.info failed: %s", error)
        if app:
            return f"https://slack.com/app_redirect?app={app}&team={team}"
        return str(self.identity.get("url") or "https://slack.com/")

    # --- delivery -------------------------------------------------------------------------

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        row, tried_before = await self._row_for(recipient, card)
        if not row.external_id and tried_before:
            await self._find_posted(row)  # an earlier attempt may have gone through
        if row.external_id:  # posted already
            await self.batches.offer(recipient, card)
            return
        with speaking(recipient.language):
            text, blocks = self._draw(row, card, recipient)
        posted = await self.api.post_message(
            channel=recipient.address or "",
            text=text,
            blocks=blocks,
            metadata={"event_type": METADATA_TYPE, "event_payload": {"delivery": row.id}},
        )
        # Only these columns: a press on the new message may already have saved its state.
        await DeliveredCard.filter(id=row.id).update(
            address=str(posted.get("channel") or recipient.address),
            external_id=str(posted.get("ts") or ""),
            updated_at=utcnow(),
        )
        await self.batches.offer(recipient, card)

    async def remind_card(self, recipient: Recipient, card: Card) -> None:
        """A reply in the card's thread, so its buttons are one scroll away; the card itself
        when it was never posted here."""
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            await self.deliver_card(recipient, card)
            return
        with speaking(recipient.language):
            text = _("⏰ Reminder: “%(title)s” still waits for your answer.", title=card.title)
        await self.api.post_message(
            channel=row.address, text=escape(text), thread_ts=row.external_id
        )

    async def update_card(self, recipient: Recipient, card: Card) -> None:
        row = await _sent_row(recipient, card)
        if row is None or not row.external_id:
            return
        with speaking(recipient.language):
            await self.show(row, card)
        await self.batches.refresh(recipient.user_id, card)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        with speaking(recipient.language):
            text, blocks = notice_blocks(notice, url)
        await self.api.post_message(channel=recipient.address or "", text=text, blocks=blocks)

    # --- drawing a card's message ---------------------------------------------------------

    async def show(self, row: DeliveredCard, card: Card) -> None:
        """Redraw the card's message: the outcome once decided (no buttons), else the
        controls for the state saved in ``row``."""
        if not row.external_id:
            return
        recipient = await self.context.recipient(row.user_id, SURFACE)
        with speaking(recipient.language):
            text, blocks = self._draw(row, card, recipient)
        await self.api.update_message(row.address, row.external_id, text, blocks)

    def _draw(self, row: DeliveredCard, card: Card, recipient: Recipient) -> tuple[str, list[Any]]:
        state = {**row.state, "viewer": row.user_id}
        web_link = self.context.card_link(card, recipient, via="web")
        blocks, _native = card_blocks(card, row.id, state, self.capabilities, web_link=web_link)
        return fallback_text(card), blocks

    def _bound_state(self, recipient: Recipient, card: Card) -> dict[str, Any]:
        """What the message will show of the card's action: its hash, which every answer
        from this message carries."""
        if card.action is None:
            return {}
        state: dict[str, Any] = {"actionHash": card.action_hash}
        if card.action.editable and not can_edit_here(card.action):
            state["editLink"] = self.context.card_link(card, recipient, via="web")
        return state

    async def _row_for(self, recipient: Recipient, card: Card) -> tuple[DeliveredCard, bool]:
        """The card's delivery to ``recipient``, and whether an earlier attempt began it."""
        row = await _sent_row(recipient, card)
        if row is not None:
            return row, True
        now = utcnow()
        row = await DeliveredCard.create(
            id=secrets.token_urlsafe(6),
            surface=SURFACE,
            user_id=recipient.user_id,
            workspace_id=card.workspace_id,
            interaction_id=card.id,
            state=self._bound_state(recipient, card),
            created_at=now,
            updated_at=now,
        )
        return row, False

    async def _find_posted(self, row: DeliveredCard) -> None:
        """The message an earlier attempt posted, if it did: found by its metadata."""
        recipient = await self.context.recipient(row.user_id, SURFACE)
        answer = await self.api.call(
            "conversations_history",
            channel=recipient.address or "",
            oldest=_slack_ts(row.created_at),
            limit=HISTORY_LOOKBACK,
            include_all_metadata=True,
        )
        for message in answer.get("messages") or []:
            metadata = message.get("metadata") or {}
            payload = metadata.get("event_payload") or {}
            if metadata.get("event_type") == METADATA_TYPE and payload.get("delivery") == row.id:
                row.address, row.external_id = recipient.address or "", str(message.get("ts"))
                await DeliveredCard.filter(id=row.id).update(
                    address=row.address, external_id=row.external_id, updated_at=utcnow()
                )
                return


def _refused_setting(error: SlackApiError, setting: str) -> Exception:
    """A token Slack refuses names the setting that holds it, in the line the hub logs each
    time it tries to start the channel again (the rest of the hub serves meanwhile)."""
    code = str(error.response.get("error") or "") if error.response is not None else ""
    if code in ("invalid_auth", "not_authed", "token_revoked", "account_inactive"):
        return ConfigurationError(
            f"Slack refused {setting} ({code}).",
            code="slack_token_refused",
            hint=f"Copy {setting} again from the Slack app's settings, then restart the hub.",
        )
    return error


async def _sent_row(recipient: Recipient, card: Card) -> DeliveredCard | None:
    """The record of ``card``'s message to ``recipient``, once its delivery began."""
    return await DeliveredCard.filter(
        surface=SURFACE, user_id=recipient.user_id, interaction_id=card.id
    ).first()


def _slack_ts(moment: datetime) -> str:
    """A moment as Slack writes message times (seconds, six decimals), a second early for
    clocks that differ a little."""
    return f"{moment.timestamp() - 1:.6f}"
