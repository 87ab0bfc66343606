"""The Slack channel against a local Slack over real sockets: linking, each card, refusals."""

from __future__ import annotations

from hub.core.store.models import Interaction, InteractionStatus
from tests.channels.conftest import eventually, slack_settings
from tests.channels.slack_peer import SlackMessage, SlackPeer

ADA = "U0ADA"
EVE = "U0EVE"


async def card_in(slack: SlackPeer, channel: str, title: str) -> SlackMessage:
    return await eventually(
        lambda: next((m for m in slack.conversation(channel) if title in m.all_text), None)
    )


async def test_an_approval_answered_from_slack(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Run the migration?")
        message = await card_in(slack, channel, "Run the migration?")
        assert message.buttons() == ["Approve", "Reject"]
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: "by Ada via Slack" in message.all_text)
        assert message.buttons() == []
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.responded_via == "slack"
