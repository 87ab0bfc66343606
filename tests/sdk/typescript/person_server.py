"""The person's hands the node suites cannot have themselves, served on loopback.

A node test answers cards on the web through the hub's JSON API on its own; what only the
test process can do, it asks here: restart the hub process, and act as the person's Telegram
account on the local Bot API server (read a card, press its buttons, reply to it).
"""

from __future__ import annotations

import asyncio
from typing import Any

from quart import Quart, request

from hub.core.store.notification_models import DeliveredCard
from hub.testing import eventually, free_port
from tests.channels.answering import press, reply, telegram_card
from tests.channels.peers import BotApiPeer, SentMessage, serve_on_loopback
from tests.sdk.live import LiveHub


def _message(message: SentMessage) -> dict[str, Any]:
    return {
        "messageId": message.message_id,
        "text": message.text,
        "buttons": [button["text"] for button in message.buttons()],
    }


async def _known_to_the_hub(message_id: int) -> bool:
    """The hub saved which card this message of its own is about (a card's message, or a
    prompt about one): it records that after Telegram answers the send, so a reply faster
    than that, which no person types, would be to a message the hub does not know yet."""
    rows = await DeliveredCard.filter(surface="telegram")
    return any(
        row.external_id == str(message_id) or row.state.get("prompt") == message_id for row in rows
    )


class PersonServer:
    def __init__(self, hub: LiveHub, bot_api: BotApiPeer, telegram_user: int) -> None:
        self.hub = hub
        self.bot_api = bot_api
        self.telegram_user = telegram_user
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.restarts = 0
        self._shutdown = asyncio.Event()
        self._server: asyncio.Task[None] | None = None

    def _app(self) -> Quart:
        app = Quart("person")
        chat = self.telegram_user

        @app.post("/hub/stop")
        async def stop_hub() -> dict[str, Any]:
            await asyncio.to_thread(self.hub.process.stop)
            return {"stopped": True}

        @app.post("/hub/start")
        async def start_hub() -> dict[str, Any]:
            await asyncio.to_thread(self.hub.process.start)
            self.restarts += 1
            return {"started": True}

        async def card_message(title: str) -> SentMessage:
            message = await telegram_card(self.bot_api, chat, title)
            await eventually(lambda: _known_to_the_hub(message.message_id))
            return message

        @app.post("/telegram/card")
        async def card() -> dict[str, Any]:
            body = await request.get_json()
            return _message(await card_message(body["title"]))

        @app.post("/telegram/press")
        async def press_button() -> dict[str, Any]:
            body = await request.get_json()
            message = await card_message(body["title"])
            answer = await press(self.bot_api, chat, message, body["label"])
            return {"answer": answer, "message": _message(message)}

        @app.post("/telegram/reply")
        async def reply_to() -> dict[str, Any]:
            body = await request.get_json()
            if "messageId" in body:
                to = int(body["messageId"])
                await eventually(lambda: _known_to_the_hub(to))
            else:
                to = (await card_message(body["title"])).message_id
            return _message(await reply(self.bot_api, chat, to, body["text"]))

        @app.post("/telegram/last")
        async def last() -> dict[str, Any]:
            return _message(self.bot_api.chat(chat)[-1])

        @app.post("/telegram/outcome")
        async def outcome() -> dict[str, Any]:
            """The card's message once it shows ``text`` (edited to who decided)."""
            body = await request.get_json()
            message = await telegram_card(self.bot_api, chat, body["title"])
            await eventually(lambda: body["text"] in message.text)
            return _message(message)

        return app

    async def __aenter__(self) -> PersonServer:
        self._server = await serve_on_loopback(self._app(), self.port, self._shutdown)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._shutdown.set()
        if self._server is not None:
            await self._server
