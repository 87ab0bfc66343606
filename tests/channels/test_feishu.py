"""The Feishu channel in this process, against a local Feishu platform: cards, presses."""

from __future__ import annotations

from hub.core.store.models import Interaction, InteractionStatus
from tests.channels.conftest import eventually, feishu_chat, feishu_settings
from tests.channels.feishu_peer import FeishuMessage, FeishuPeer

ADA = "ou_ada"


async def feishu_card(feishu: FeishuPeer, open_id: str, title: str) -> FeishuMessage:
    return await eventually(
        lambda: next((m for m in feishu.chat(feishu_chat(open_id)) if title in m.text), None)
    )


async def test_an_approval_is_answered_from_its_card(make_hub, feishu: FeishuPeer) -> None:
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        interaction_id = await hub.ask(title="Deploy?")
        card = await feishu_card(feishu, ADA, "Deploy?")
        assert card.labels() == ["✅ Approve", "✖️ Reject"]
        answer = await feishu.press(ADA, card, "Approve")
        assert answer["toast"]["content"].startswith("Thank you")
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.responded_via == "feishu"
        assert "by Ada via Feishu" in card.text and card.buttons() == []
