"""A person who wants high-risk cards only hears of those by email and on Telegram; the
lower-risk card still waits in their inbox. Real SMTP and Bot API peers on loopback."""

from __future__ import annotations

from hub.core.notify.preferences import update_preferences
from hub.core.store.notification_models import Notification, NotificationStatus
from tests.channels.conftest import eventually, peer_settings
from tests.channels.peers import BotApiPeer, SmtpPeer

ADA = 4242


async def test_only_high_risk_sends_the_high_card_and_not_the_medium_one(
    make_hub, smtp: SmtpPeer, bot_api: BotApiPeer
) -> None:
    settings = peer_settings(smtp, bot_api)
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        await update_preferences(hub.owner.user.id, {"onlyHighRisk": True})
        medium = await hub.ask(title="Rotate the logs", risk="medium")
        await hub.ask(title="Drop the production table", risk="high")

        def mailed() -> list[str]:
            return [str(m["Subject"]) for m in smtp.messages]

        await eventually(lambda: any("Drop the production table" in s for s in mailed()))
        await eventually(
            lambda: any("Drop the production table" in m.text for m in bot_api.chat(ADA))
        )

        async def settled() -> bool:
            return not await Notification.filter(status=NotificationStatus.PENDING).exists()

        await eventually(settled)
        medium_rows = await Notification.filter(interaction_id=medium, kind="waiting").count()
        inbox = await (
            await hub.client.get(
                f"/api/v1/workspaces/{hub.owner.workspace.id}/inbox", headers=hub.owner.headers
            )
        ).get_json()
    assert not any("Rotate the logs" in s for s in mailed())
    assert not any("Rotate the logs" in m.text for m in bot_api.chat(ADA))
    assert medium_rows == 0
    assert medium in str(inbox)  # not sent, yet waiting in the inbox
