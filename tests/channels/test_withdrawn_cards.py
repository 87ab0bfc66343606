"""A card its agent withdrew closes on every surface that was sent it, saying why."""

from __future__ import annotations

from hub.core.log.events import append_event
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import Notification, NotificationKind, NotificationStatus
from tests.channels.answering import api_respond, mail_for, mail_links, telegram_card
from tests.channels.conftest import Hub, eventually
from tests.channels.peers import BotApiPeer, SmtpPeer

ADA = 4242
ANSWERED = "Answered in the terminal; this card takes no answer."


async def withdraw(hub: Hub, interaction_id: str, reason: str, note: str = "") -> None:
    await append_event(
        hub.owner.workspace.id,
        "interaction.withdrawn",
        {"interactionId": interaction_id, "reason": reason, "note": note},
        actor=f"agent:{hub.agent.id}",
    )


async def test_answered_in_the_terminal_closes_telegram_email_and_the_api(
    make_hub, smtp: SmtpPeer, bot_api: BotApiPeer
) -> None:
    settings = {
        "smtp_url": smtp.url,
        "telegram_bot_token": bot_api.token,
        "telegram_api_url": bot_api.url,
    }
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        interaction_id = await hub.ask(title="Run `git push --force`?")
        mail = await mail_for(smtp, hub.owner, "git push")
        message = await telegram_card(bot_api, ADA, "git push")
        approve = message.button("Approve")["callback_data"]

        await withdraw(hub, interaction_id, "answered_in_terminal", "<i>pushed</i>")

        # Telegram's copy is edited to say why, its buttons gone; the note stays plain text
        # (the peer keeps the HTML the bot sent).
        await eventually(lambda: ANSWERED in message.text)
        assert message.buttons() == []
        assert "&lt;i&gt;pushed&lt;/i&gt;" in message.text
        # A tap on a button shown before decides nothing and says why.
        query = bot_api.press(ADA, message, approve)
        tapped = await eventually(lambda: bot_api.answers.get(query))
        assert ANSWERED in str(tapped.get("text"))
        # Every email link shows the card closed, and an answer through it is refused.
        for link in mail_links(mail).values():
            page = await hub.client.get(link)
            assert ANSWERED in await page.get_data(as_text=True)
            late = await hub.client.post(link, form={})
            assert late.status_code == 409
            assert ANSWERED in await late.get_data(as_text=True)
        # The API refuses an answer with the card's state, and shows the withdrawal.
        late = await api_respond(hub, hub.owner, interaction_id, {"optionId": "approve"})
        assert late.status_code == 410
        assert (await late.get_json())["error"]["code"] == "interaction_cancelled"
        shown = await hub.client.get(
            f"/api/v1/workspaces/{hub.owner.workspace.id}/interactions/{interaction_id}",
            headers=hub.owner.headers,
        )
        body = await shown.get_json()
        assert body["status"] == "cancelled"
        assert body["withdrawal"]["reason"] == "answered_in_terminal"
        assert body["withdrawal"]["note"] == "<i>pushed</i>"
        card = await Interaction.get(id=interaction_id)
        assert card.status == InteractionStatus.CANCELLED and card.response is None


async def test_a_card_withdrawn_before_its_notice_went_out_is_not_sent(
    make_hub, bot_api: BotApiPeer
) -> None:
    settings = {"telegram_bot_token": bot_api.token, "telegram_api_url": bot_api.url}
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        await hub.runtime.worker.stop()  # hold the outbox: the card's notice waits
        interaction_id = await hub.ask(title="Delete the cache?")
        await withdraw(hub, interaction_id, "no_longer_needed")
        hub.runtime.worker.start()

        async def delivered() -> bool:
            return not await Notification.filter(
                interaction_id=interaction_id, status=NotificationStatus.PENDING
            ).exists()

        await eventually(delivered)
        kinds = {
            (n.kind, n.status) for n in await Notification.filter(interaction_id=interaction_id)
        }
        assert (NotificationKind.WAITING, NotificationStatus.SKIPPED) in kinds
        assert not any("Delete the cache?" in m.text for m in bot_api.chat(ADA))
