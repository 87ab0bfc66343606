"""Web, email, Telegram, Feishu and Slack answering the same card at once: one decision, the
rest told who won."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

from hub.core.store.models import Event, Interaction
from tests.channels.answering import api_respond, mail_for, mail_links, telegram_card
from tests.channels.conftest import eventually, feishu_settings, slack_settings
from tests.channels.feishu_peer import FeishuMessage, FeishuPeer
from tests.channels.peers import BotApiPeer, SentMessage, SmtpPeer
from tests.channels.slack_peer import SlackMessage, SlackPeer
from tests.channels.test_feishu import feishu_card

ADA = 4242
ADA_ON_FEISHU = "ou_ada"
ADA_IN_SLACK = "U0ADA"
ROUNDS = 50


async def test_fifty_five_way_races_each_end_with_one_decision(
    make_hub, smtp: SmtpPeer, bot_api: BotApiPeer, feishu: FeishuPeer, slack: SlackPeer
) -> None:
    settings = {
        "smtp_url": smtp.url,
        "telegram_bot_token": bot_api.token,
        "telegram_api_url": bot_api.url,
        **feishu_settings(feishu),
        **slack_settings(slack),
    }
    winners: Counter[str] = Counter()
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        await hub.link_feishu(hub.owner, feishu, ADA_ON_FEISHU)
        in_slack = await hub.link_slack(hub.owner, slack, ADA_IN_SLACK)
        # All the cards first, so that their delivery overlaps; then one race per card.
        titles = [f"Deploy build {round_}?" for round_ in range(ROUNDS)]
        asked = {title: await hub.ask(title=title) for title in titles}
        await eventually(lambda: len(smtp.messages) == ROUNDS, within=120)
        for title in titles:
            interaction_id = asked[title]
            link = mail_links(await mail_for(smtp, hub.owner, title))["Approve"]
            card = await telegram_card(bot_api, ADA, title)
            data = card.button("Approve")["callback_data"]
            on_feishu = await feishu_card(feishu, ADA_ON_FEISHU, title)
            press = feishu.press_event(ADA_ON_FEISHU, on_feishu, on_feishu.button("Approve"))
            slack_card = await eventually(
                lambda t=title: next(
                    (m for m in slack.conversation(in_slack) if t in m.all_text), None
                )
            )
            told_before = len(slack.told(ADA_IN_SLACK))

            async def by_telegram(data: str = data, card: SentMessage = card) -> str:
                await asyncio.sleep(random.uniform(0, 0.03))
                return bot_api.press(ADA, card, data)

            async def by_web(interaction_id: str = interaction_id) -> Any:
                await asyncio.sleep(random.uniform(0, 0.03))
                return await api_respond(hub, hub.owner, interaction_id, {"optionId": "approve"})

            async def by_email(link: str = link) -> Any:
                await asyncio.sleep(random.uniform(0, 0.03))
                return await hub.client.post(link, form={})

            async def by_feishu(
                card: FeishuMessage = on_feishu, press: dict[str, Any] = press
            ) -> dict[str, Any]:
                await asyncio.sleep(random.uniform(0, 0.03))
                return await feishu.deliver_press(card, press)

            async def by_slack(card: SlackMessage = slack_card) -> None:
                await asyncio.sleep(random.uniform(0, 0.03))
                await slack.press(ADA_IN_SLACK, card, "Approve")

            # Each surface starts within the same few milliseconds, in a random order.
            query, web, email, pressed, _ = await asyncio.gather(
                by_telegram(), by_web(), by_email(), by_feishu(), by_slack()
            )
            telegram = await eventually(lambda q=query: bot_api.answers.get(q))

            async def slack_handled(
                interaction_id: str = interaction_id, before: int = told_before
            ) -> bool:
                decided = await Interaction.get(id=interaction_id)
                return decided.responded_via == "slack" or len(slack.told(ADA_IN_SLACK)) > before

            await eventually(slack_handled)

            assert await _decisions(hub.owner.workspace.id, interaction_id) == 1
            interaction = await Interaction.get(id=interaction_id)
            winner = interaction.responded_via
            winners[winner or "none"] += 1
            told = f"Already decided by Ada via {_said(winner)}"
            assert (web.status_code == 200) == (winner == "api")
            if winner != "api":
                assert web.status_code == 409
                assert (await web.get_json())["error"]["details"]["via"] == winner
            assert (email.status_code == 200) == (winner == "email")
            if winner != "email":
                assert email.status_code == 409
                assert told in await email.get_data(as_text=True)
            if winner != "telegram":
                assert telegram["text"].startswith(told), telegram
            else:
                assert telegram["text"].startswith("Thank you")
            if winner != "feishu":
                assert pressed["toast"]["content"].startswith(told), pressed
            else:
                assert pressed["toast"]["content"].startswith("Thank you")
            await eventually(lambda card=on_feishu: card.controls() == [])
            slack_told = slack.told(ADA_IN_SLACK)[told_before:]
            if winner != "slack":  # told in place, only to the presser
                assert len(slack_told) == 1 and slack_told[0].startswith(told), slack_told
            else:
                assert slack_told == []
            said = _said(winner)
            await eventually(lambda c=slack_card, w=said: f"via {w}" in c.all_text)
            assert slack_card.controls() == []
    assert sum(winners.values()) == ROUNDS
    print(f"winners over {ROUNDS} rounds: {dict(winners)}")


def _said(via: str | None) -> str:
    return {
        "api": "the API",
        "email": "email",
        "telegram": "Telegram",
        "feishu": "Feishu",
        "slack": "Slack",
    }[via or ""]


async def _decisions(workspace_id: str, interaction_id: str) -> int:
    events = await Event.filter(workspace_id=workspace_id, type="interaction.resolved")
    return sum(1 for e in events if e.payload.get("interactionId") == interaction_id)
