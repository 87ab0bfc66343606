"""Telegram against a local Bot API server, driven by python-telegram-bot itself."""

from __future__ import annotations

from hub.core.log.events import append_event
from hub.core.notify.preferences import update_preferences
from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import Notification
from hub.core.work.interactions import respond_to_interaction
from tests.channels.answering import press, telegram_card
from tests.channels.conftest import eventually
from tests.channels.peers import BotApiPeer

ADA = 4242
CHECKS = {
    "type": "choice",
    "title": "Which checks?",
    "multiple": True,
    "minSelections": 1,
    "options": [{"id": "lint", "label": "Lint"}, {"id": "unit", "label": "Unit tests"}],
}


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


async def test_only_the_linked_person_can_answer(make_hub, bot_api: BotApiPeer) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        interaction_id = await hub.ask(title="Delete the branch?")
        card = await telegram_card(bot_api, ADA, "Delete the branch?")
        data = card.button("Approve")["callback_data"]
        assert len(data.encode()) <= 64

        stranger = bot_api.press(9999, card, data)
        answer = await eventually(lambda: bot_api.answers.get(stranger))
        assert answer["text"] == "This card is for someone else." and answer["show_alert"]
        forged = bot_api.press(ADA, card, "nonsense:o:0")
        assert "no longer here" in (await eventually(lambda: bot_api.answers.get(forged)))["text"]
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING


async def test_a_review_too_long_for_a_message_links_to_the_whole_card(
    make_hub, bot_api: BotApiPeer
) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        content = "\n".join(f"line {n}: change something important" for n in range(400))
        interaction_id = await hub.ask(type="review", title="Review the diff", content=content)
        card = await telegram_card(bot_api, ADA, "Review the diff")
        assert "line 399" not in card.text and "open it on the web" in card.text
        [button] = card.buttons()
        assert "callback_data" not in button  # no answer without the whole content
        page = await hub.client.get(button["url"].removeprefix("http://hub.test"))
        assert "line 399" in await page.get_data(as_text=True)
        decided = await hub.client.post(
            button["url"].removeprefix("http://hub.test"), form={"optionId": "approve"}
        )
        assert decided.status_code == 200
        assert (await Interaction.get(id=interaction_id)).responded_via == "web"
        await eventually(lambda: "by Ada via the web" in card.text)


async def test_a_sensitive_answer_is_never_repeated(make_hub, bot_api: BotApiPeer) -> None:
    secret = "hunter2-do-not-repeat"
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        await hub.ask(type="input", title="Database password?", input={"sensitive": True})
        card = await telegram_card(bot_api, ADA, "Database password?")
        bot_api.send_text(ADA, secret, reply_to=card.message_id)
        await eventually(lambda: "hidden" in card.text)
        assert "deleteMessage" in bot_api.calls  # the typed secret leaves the chat
        assert all(secret not in m.text for m in bot_api.messages.values())
        assert all(secret not in text for m in bot_api.messages.values() for text in m.history)


async def test_a_failed_task_is_told(make_hub, bot_api: BotApiPeer) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        interaction_id = await hub.ask(title="Retry the job?")
        task_id = (await Interaction.get(id=interaction_id)).task_id
        await respond_to_interaction(
            hub.owner.workspace.id,
            interaction_id,
            {"optionId": "approve"},
            responder=f"user:{hub.owner.user.id}",
            via="web",
        )
        await append_event(
            hub.owner.workspace.id,
            "task.status_changed",
            {"taskId": task_id, "status": "failed", "error": "disk full"},
            actor=f"agent:{hub.agent.id}",
        )
        told = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "failed" in m.text), None)
        )
        assert "Ship the release" in told.text and "disk full" in told.text


async def test_a_bot_api_away_at_start_delays_cards_until_it_is_back(
    make_hub, bot_api: BotApiPeer
) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
    await bot_api.stop()
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await hub.ask(title="Card while the Bot API is away")
        await eventually(lambda: Notification.filter(surface="telegram", attempts__gte=1).exists())
        await bot_api.start()
        card = await telegram_card(bot_api, ADA, "Card while the Bot API is away")
        query = bot_api.press(ADA, card, card.button("Approve")["callback_data"])
        assert (await eventually(lambda: bot_api.answers.get(query)))["text"].startswith("Thank")


async def test_with_a_webhook_secret_telegram_pushes_updates(make_hub, bot_api: BotApiPeer) -> None:
    secret = "webhook-secret_123"
    async with make_hub(
        telegram_bot_token=bot_api.token,
        telegram_api_url=bot_api.url,
        telegram_webhook_secret=secret,
    ) as hub:
        await eventually(lambda: bot_api.webhook)
        assert bot_api.webhook == {
            "url": "http://hub.test/telegram/webhook",
            "secret_token": secret,
            "allowed_updates": ["message", "callback_query"],
        }
        assert "getUpdates" not in bot_api.calls
        statuses: list[int] = []

        async def post(update: dict, token: str = secret) -> None:
            answer = await hub.client.post(
                "/telegram/webhook",
                json=update,
                headers={"X-Telegram-Bot-Api-Secret-Token": token},
            )
            statuses.append(answer.status_code)

        forged = await hub.client.post(
            "/telegram/webhook",
            json={"update_id": 1},
            headers={"X-Telegram-Bot-Api-Secret-Token": "x"},
        )
        assert forged.status_code == 403
        bot_api.push_to = post
        await hub.link_telegram(hub.owner, bot_api, ADA)
        interaction_id = await hub.ask(title="Promote the canary?")
        card = await telegram_card(bot_api, ADA, "Promote the canary?")
        query = bot_api.press(ADA, card, card.button("Approve")["callback_data"])
        await eventually(lambda: bot_api.answers.get(query))
        assert (await Interaction.get(id=interaction_id)).responded_via == "telegram"
        assert set(statuses) == {200}


async def test_messages_speak_the_language_of_the_person(make_hub, bot_api: BotApiPeer) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        await update_preferences(hub.owner.user.id, {"language": "zh-Hans"})
        await hub.link_telegram(hub.owner, bot_api, ADA)
        assert any(m.text.startswith("已关联。") for m in bot_api.chat(ADA))
        interaction_id = await hub.ask(title="上线新版本？", risk="high", impact="会重启服务")
        card = await telegram_card(bot_api, ADA, "上线新版本？")
        assert "deploy-bot · 任务: Ship the release" in card.text
        assert "⛔ 高风险" in card.text and "影响是什么" in card.text

        stranger = bot_api.press(9999, card, card.button("Approve")["callback_data"])
        assert (await eventually(lambda: bot_api.answers.get(stranger)))["text"] == (
            "这张卡片是给其他人的。"
        )
        assert (await press(bot_api, ADA, card, "Approve"))["text"] == "请再点一次以确认。"
        assert (await press(bot_api, ADA, card, "↩️ 取消"))["text"] == "未回答。"
        await press(bot_api, ADA, card, "Approve")
        answer = await press(bot_api, ADA, card, "✅ 确认：Approve")
        assert answer["text"].startswith("谢谢——已记录：Approve — 由 Ada 通过Telegram决定")
        assert "通过Telegram决定" in card.text and card.buttons() == []

        await hub.ask(**CHECKS)
        multi = await telegram_card(bot_api, ADA, CHECKS["title"])
        assert "勾选选项，然后点“提交”。" in multi.text and multi.button("提交（0）")

        task_id = (await Interaction.get(id=interaction_id)).task_id
        await append_event(
            hub.owner.workspace.id,
            "task.status_changed",
            {"taskId": task_id, "status": "failed", "error": "disk full"},
            actor=f"agent:{hub.agent.id}",
        )
        told = await eventually(
            lambda: next((m for m in bot_api.chat(ADA) if "失败了" in m.text), None)
        )
        assert "deploy-bot 的任务“Ship the release”失败了。" in told.text
        assert "原因：disk full" in told.text and "打开任务" in told.text


async def test_a_message_that_answers_no_card_is_told_how_to_answer(
    make_hub, bot_api: BotApiPeer
) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        bot_api.send_text(7777, "hello?")  # nobody linked this chat
        told = await eventually(lambda: [m for m in bot_api.chat(7777) if "not linked" in m.text])
        assert "Settings → Telegram" in told[0].text

        await hub.link_telegram(hub.owner, bot_api, ADA)
        bot_api.send_text(ADA, "deploy it")
        await eventually(lambda: any("answers no card" in m.text for m in bot_api.chat(ADA)))
        assert "use the buttons" in bot_api.chat(ADA)[-1].text

        interaction_id = await hub.ask(type="input", title="Which branch?")
        card = await telegram_card(bot_api, ADA, "Which branch?")
        before = len(bot_api.chat(ADA))
        bot_api.send_text(ADA, "main")  # typed, not a reply: nothing is decided...
        hint = await eventually(lambda: bot_api.chat(ADA)[before:])
        assert "To answer “Which branch?”, reply to this card's message" in hint[0].text
        assert bot_api.replies[hint[0].message_id] == card.message_id  # ...one tap away
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING

        approval = await hub.ask(title="Tag the release?")
        message = await telegram_card(bot_api, ADA, "Tag the release?")
        before = len(bot_api.chat(ADA))
        bot_api.send_text(ADA, "yes", reply_to=message.message_id)
        told = await eventually(lambda: bot_api.chat(ADA)[before:])
        assert "answered with the buttons" in told[0].text
        assert (await Interaction.get(id=approval)).status == InteractionStatus.PENDING
