"""Telegram against a local Bot API server, driven by python-telegram-bot itself."""

from __future__ import annotations

from hub.core.models import Interaction, InteractionStatus
from tests.channels.conftest import eventually
from tests.channels.peers import BotApiPeer

ADA = 4242


async def test_a_high_risk_approval_needs_a_confirming_tap(make_hub, bot_api: BotApiPeer) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        interaction_id = await hub.ask(risk="high", impact="Locks the orders table")
        card = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "Run the migration?" in m.text), None)
        )
        assert "High risk" in card.text and "Locks the orders table" in card.text

        first = bot_api.press(ADA, card, card.button("Approve")["callback_data"])
        await eventually(lambda: first in bot_api.answers)
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING
        confirm = card.button("Yes")

        second = bot_api.press(ADA, card, confirm["callback_data"])
        await eventually(lambda: second in bot_api.answers)
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.responded_via == "telegram"
        assert "by Ada via Telegram" in card.text
        assert card.buttons() == []
