"""Acting as the person on each surface: the web (JSON API), an email's links, Telegram."""

from __future__ import annotations

import re
from email.message import EmailMessage
from typing import Any

from tests.channels.conftest import Hub, Person, eventually
from tests.channels.peers import BotApiPeer, SentMessage, SmtpPeer


def mail_links(mail: EmailMessage) -> dict[str, str]:
    """The mail's action links by the label in front of them (plain-text part)."""
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    found = re.findall(
        r"^- (.+?)(?: \(.*\))?: http://hub\.test(/a/[\w.\-]+)\r?$", plain.get_content(), re.M
    )
    return dict(found)


async def mail_for(smtp: SmtpPeer, person: Person, title: str) -> EmailMessage:
    def find() -> EmailMessage | None:
        return next((m for m in smtp.to(person.user.email) if title in str(m["Subject"])), None)

    return await eventually(find)


async def telegram_card(bot_api: BotApiPeer, chat: int, title: str) -> SentMessage:
    return await eventually(lambda: next((m for m in bot_api.chat(chat) if title in m.text), None))


async def press(bot_api: BotApiPeer, chat: int, card: SentMessage, label: str) -> dict[str, Any]:
    query = bot_api.press(chat, card, card.button(label)["callback_data"])
    return await eventually(lambda: bot_api.answers.get(query))


async def reply(bot_api: BotApiPeer, chat: int, to: int, text: str) -> SentMessage:
    """Reply to message ``to``; returns the bot's next message in the chat."""
    before = {m.message_id for m in bot_api.chat(chat)}
    bot_api.send_text(chat, text, reply_to=to)
    return await eventually(
        lambda: next((m for m in bot_api.chat(chat) if m.message_id not in before), None)
    )


async def api_respond(hub: Hub, person: Person, interaction_id: str, body: dict[str, Any]) -> Any:
    return await hub.client.post(
        f"/api/v1/workspaces/{person.workspace.id}/interactions/{interaction_id}/respond",
        json=body,
        headers=person.headers,
    )
