"""Each card type answered in Feishu, validated, and read-only everywhere after.

The web, email, Telegram, the notebook and Slack are answered over real sockets, against a
hub process, in ``tests/e2e/parity``; Feishu is answered here, in process, until it has its
class there (``tests/e2e/parity/surfaces``). Every surface's copy is checked read-only in
every cell."""

from __future__ import annotations

from typing import Any

import pytest

from hub.core.store.models import Interaction, InteractionStatus
from tests.channels.answering import (
    api_respond,
    mail_for,
    mail_links,
    telegram_card,
)
from tests.channels.conftest import eventually, feishu_settings, slack_settings
from tests.channels.feishu_peer import FeishuPeer
from tests.channels.peers import BotApiPeer, SmtpPeer
from tests.channels.slack_peer import SlackPeer
from tests.channels.test_feishu import feishu_card

ADA = 4242
ADA_ON_FEISHU = "ou_ada"
ADA_IN_SLACK = "U0ADA"

CARDS: dict[str, dict[str, Any]] = {
    "approval": {"type": "approval", "title": "Run the migration?"},
    "choice": {
        "type": "choice",
        "title": "Which region?",
        "options": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "United States"}],
    },
    "multi": {
        "type": "choice",
        "title": "Which checks?",
        "multiple": True,
        "minSelections": 1,
        "options": [
            {"id": "lint", "label": "Lint"},
            {"id": "unit", "label": "Unit tests"},
            {"id": "e2e", "label": "End to end"},
        ],
    },
    "input": {"type": "input", "title": "Contact address?", "input": {"format": "email"}},
    "review": {"type": "review", "title": "Review the plan", "content": "1. Back up\n2. Migrate"},
}

EXPECTED: dict[str, dict[str, Any]] = {
    "approval": {"optionId": "approve"},
    "choice": {"optionId": "us"},
    "multi": {"optionIds": ["lint", "e2e"]},
    "input": {"text": "ops@example.com"},
    "review": {"optionId": "request_changes", "comment": "Add a rollback step"},
}


async def answer_on_feishu(feishu: FeishuPeer, kind: str, title: str) -> None:
    card = await feishu_card(feishu, ADA_ON_FEISHU, title)
    if kind == "approval":
        await feishu.press(ADA_ON_FEISHU, card, "Approve")
    elif kind == "choice":
        await feishu.press(ADA_ON_FEISHU, card, "United States")
    elif kind == "multi":
        refused = await feishu.press(ADA_ON_FEISHU, card, "Submit", form={})
        assert refused["toast"]["type"] == "error"  # nothing chosen: told why, nothing decided
        await feishu.press(ADA_ON_FEISHU, card, "Submit", form={"choices": ["0", "2"]})
    elif kind == "input":
        refused = await feishu.press(ADA_ON_FEISHU, card, "Send", form={"text": "not an address"})
        assert "doesn't fit" in refused["toast"]["content"] and "card" not in refused
        await feishu.press(ADA_ON_FEISHU, card, "Send", form={"text": "ops@example.com"})
    else:
        refused = await feishu.press(ADA_ON_FEISHU, card, "Request changes", form={})
        assert "should change" in refused["toast"]["content"]
        form = {"comment": "Add a rollback step"}
        await feishu.press(ADA_ON_FEISHU, card, "Request changes", form=form)


@pytest.mark.parametrize("surface", ["feishu"])
@pytest.mark.parametrize("kind", list(CARDS))
async def test_card_answered_then_read_only_everywhere(
    make_hub,
    smtp: SmtpPeer,
    bot_api: BotApiPeer,
    feishu: FeishuPeer,
    slack: SlackPeer,
    kind: str,
    surface: str,
) -> None:
    settings = {
        "smtp_url": smtp.url,
        "telegram_bot_token": bot_api.token,
        "telegram_api_url": bot_api.url,
        **feishu_settings(feishu),
        **slack_settings(slack),
    }
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        await hub.link_feishu(hub.owner, feishu, ADA_ON_FEISHU)
        channel = await hub.link_slack(hub.owner, slack, ADA_IN_SLACK)
        card = CARDS[kind]
        interaction_id = await hub.ask(**card)
        mail = await mail_for(smtp, hub.owner, card["title"])
        message = await telegram_card(bot_api, ADA, card["title"])
        on_feishu = await feishu_card(feishu, ADA_ON_FEISHU, card["title"])
        in_slack = await eventually(
            lambda: next(
                (m for m in slack.conversation(channel) if card["title"] in m.all_text), None
            )
        )

        await answer_on_feishu(feishu, kind, card["title"])

        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.response == EXPECTED[kind]
        assert interaction.responded_via == surface

        # Read-only everywhere: the Telegram, Feishu and Slack copies turned to the outcome,
        # without controls...
        via = "Feishu"
        await eventually(lambda: f"by Ada via {via}" in message.text)
        assert message.buttons() == []
        await eventually(lambda: f"by Ada via {via}" in on_feishu.text)
        assert on_feishu.controls() == []
        await eventually(lambda: f"by Ada via {via}" in in_slack.all_text)
        assert in_slack.controls() == []
        # ...every email link shows the outcome and decides nothing...
        for link in mail_links(mail).values():
            page = await hub.client.get(link)
            assert f"by Ada via {via}" in await page.get_data(as_text=True)
            late = await hub.client.post(link, form={"text": "x@example.com"})
            # 409 "already decided", or 410 "used already" for the link that decided.
            assert late.status_code in (409, 410)
            assert f"by Ada via {via}" in await late.get_data(as_text=True)
        # ...and the API says who decided.
        late = await api_respond(hub, hub.owner, interaction_id, EXPECTED[kind])
        assert late.status_code == 409
        assert (await late.get_json())["error"]["details"]["via"] == interaction.responded_via
