"""A new card waits a moment before it goes out: one answered meanwhile is never sent.

The person who answers within seconds saw the card where they were (the terminal's own
dialog, a page already open); a mail and a phone buzz about it afterwards would only be
noise. A card left waiting goes out once the hold is over, on every surface.
"""

from __future__ import annotations

from hub.core.store.notification_models import Notification, NotificationStatus
from tests.channels.answering import api_respond
from tests.channels.conftest import eventually, peer_settings
from tests.channels.peers import BotApiPeer, SmtpPeer

ADA = 4242


async def test_a_card_answered_within_the_hold_is_not_sent_and_one_left_waiting_is(
    make_hub, smtp: SmtpPeer, bot_api: BotApiPeer
) -> None:
    settings = peer_settings(smtp, bot_api, notify_after_s=1.5)
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        quick = await hub.ask(title="Answered at once")
        answered = await api_respond(hub, hub.owner, quick, {"optionId": "approve"})
        assert answered.status_code == 200
        await hub.ask(title="Left waiting")

        def mailed() -> list[str]:
            return [str(m["Subject"]) for m in smtp.messages]

        await eventually(lambda: any("Left waiting" in s for s in mailed()), within=30)
        await eventually(
            lambda: any("Left waiting" in m.text for m in bot_api.chat(ADA)), within=30
        )

        async def settled() -> bool:
            return not await Notification.filter(status=NotificationStatus.PENDING).exists()

        await eventually(settled, within=30)
        rows = await Notification.filter(kind="waiting").order_by("surface", "created_at")
        quick_rows = [r.status for r in rows if r.interaction_id == quick]
    assert not any("Answered at once" in s for s in mailed())
    assert not any("Answered at once" in m.text for m in bot_api.chat(ADA))
    assert quick_rows == [NotificationStatus.SKIPPED, NotificationStatus.SKIPPED]
