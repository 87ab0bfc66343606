"""The Slack channel against a local Slack over real sockets (Web API, Socket Mode): linking,
each card natively, the second press for high risk, votes, refusals, agent text as text."""

from __future__ import annotations

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Interaction, InteractionStatus, Membership, Role
from hub.core.store.notification_models import ChannelAccount
from hub.core.work.interactions import respond_to_interaction
from tests.channels.conftest import Hub, eventually, slack_settings
from tests.channels.slack_peer import SlackMessage, SlackPeer

ADA = "U0ADA"
BO = "U0BO"
EVE = "U0EVE"
MIGRATION = {
    "kind": "db.migration",
    "fields": {"database": "prod-eu", "statements": ["ALTER TABLE users ADD plan text"],
               "batchSize": 500},
    "editable": ["statements", "batchSize"],
}  # fmt: skip


async def card_in(slack: SlackPeer, channel: str, title: str) -> SlackMessage:
    return await eventually(
        lambda: next((m for m in slack.conversation(channel) if title in m.all_text), None)
    )


async def settled(message: SlackMessage) -> None:
    """A press is acknowledged before it is handled, as Slack wants: wait for its redraw."""
    await eventually(lambda: message.controls() == [])


async def status(interaction_id: str) -> str:
    return str((await Interaction.get(id=interaction_id)).status)


async def test_linking_by_a_code_sent_to_the_app(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = slack.person(ADA, "Ada Lovelace")
        await slack.send_dm(ADA, "hello")
        hello = await eventually(lambda: slack.conversation(channel))
        assert "http://hub.test/settings#slack" in hello[0].text
        await slack.send_dm(ADA, "link " + "x" * 32)
        await eventually(
            lambda: any("invalid or expired" in m.text for m in slack.conversation(channel))
        )
        assert not await ChannelAccount.filter(surface="slack").exists()

        linked = await hub.client.post("/api/v1/me/channels/slack/link", headers=hub.owner.headers)
        assert linked.status_code == 201
        body = await linked.get_json()
        assert body["url"] == "https://slack.com/app_redirect?app=A0LINEUP&team=T0LINEUP"
        await slack.send_dm(ADA, f"my code is {body['token']}, thanks")
        await eventually(
            lambda: any(m.text.startswith("Linked") for m in slack.conversation(channel))
        )
        account = await ChannelAccount.get(surface="slack")
        assert (account.user_id, account.external_id) == (hub.owner.user.id, ADA)
        assert (account.address, account.display_name) == (channel, "Ada Lovelace")
        # The bot's own messages come back as events too: none of them is answered.
        said = len(slack.conversation(channel))
        await slack.send_dm(ADA, body["token"])  # used once already
        await eventually(lambda: len(slack.conversation(channel)) == said + 1)

        channels = await hub.client.get("/api/v1/me/channels", headers=hub.owner.headers)
        assert [c["surface"] for c in (await channels.get_json())["channels"]] == ["slack"]
        gone = await hub.client.delete("/api/v1/me/channels/slack", headers=hub.owner.headers)
        assert gone.status_code == 204


async def test_an_approval_answered_from_slack(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Run the migration?", impact="Locks a table")
        message = await card_in(slack, channel, "Run the migration?")
        assert message.buttons() == ["Approve", "Reject"]
        assert "Locks a table" in message.all_text
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: "Approve — by Ada via Slack" in message.all_text)
        assert message.controls() == []
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert (interaction.responded_via, interaction.response) == (
            "slack",
            {"optionId": "approve"},
        )
        assert slack.told(ADA) == []  # decided in place: nothing else to say


async def test_agent_text_is_text_never_markup_or_mentions(make_hub, slack: SlackPeer) -> None:
    title = "Deploy <!channel> & tell <@U0EVE> via <https://evil.example|the docs>"
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        await hub.ask(title=title, description="*bold* _it_ <!here> :fire:")
        message = await card_in(slack, channel, "Deploy")
        posted = next(p for p in slack.called("chat.postMessage") if p["text"].startswith("Deploy"))
        # The notification text is mrkdwn with Slack's three control characters escaped...
        escaped = "Deploy &lt;!channel&gt; &amp; tell &lt;@U0EVE&gt; via "
        assert posted["text"].startswith(escaped + "&lt;https://evil.example|the docs&gt;")
        assert (posted["unfurl_links"], posted["unfurl_media"], posted["parse"]) == (
            False,
            False,
            "none",
        )
        # ...and every block of agent text is plain_text, shown exactly as written.
        header = message.blocks[0]
        assert header == {
            "type": "header",
            "text": {"type": "plain_text", "text": title, "emoji": False},
        }
        why = next(
            b for b in message.blocks if b.get("text", {}).get("text", "").startswith("*bold*")
        )
        assert why["text"] == {
            "type": "plain_text",
            "text": "*bold* _it_ <!here> :fire:",
            "emoji": False,
        }
        for block in message.blocks:
            if block["type"] == "section" and block["text"]["type"] == "mrkdwn":
                assert "<" not in block["text"]["text"]  # only the hub's own headings


async def test_a_strangers_press_is_refused_in_place(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        bo = await hub.person("bo")
        await hub.link_slack(bo, slack, EVE)  # a hub account of its own: still not Ada's card
        interaction_id = await hub.ask(title="Drop the table?")
        message = await card_in(slack, channel, "Drop the table?")
        for stranger in (EVE, "U0NOBODY"):
            await slack.press(stranger, message, "Approve")
            told = await eventually(lambda s=stranger: slack.told(s))
            assert told == ["This card is for someone else."]
        assert await status(interaction_id) == InteractionStatus.PENDING
        assert message.history == [] and message.buttons() == ["Approve", "Reject"]
        assert slack.told(ADA) == []
        await slack.press(ADA, message, "Reject")
        await settled(message)
        assert "Reject — by Ada via Slack" in message.all_text


async def test_high_risk_takes_a_second_deliberate_press(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Migrate prod?", risk="high", impact="Locks orders")
        message = await card_in(slack, channel, "Migrate prod?")
        assert "⛔ High risk" in message.all_text
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: message.buttons() == ["⛔ Yes: Approve", "Cancel"])
        assert await status(interaction_id) == InteractionStatus.PENDING
        await slack.press(ADA, message, "Cancel")
        await eventually(lambda: message.buttons() == ["Approve", "Reject"])
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: message.buttons() == ["⛔ Yes: Approve", "Cancel"])
        await slack.press(ADA, message, "Yes: Approve")
        await settled(message)
        assert await status(interaction_id) == InteractionStatus.RESOLVED
        assert "Approve — by Ada via Slack" in message.all_text


async def test_a_quorum_counts_votes_in_every_copy(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        bo = await hub.person("bo")
        await Membership.create(
            id=new_id("membership"), workspace=hub.owner.workspace, user=bo.user, role=Role.MEMBER
        )
        ada_channel = await hub.link_slack(hub.owner, slack, ADA)
        bo_channel = await hub.link_slack(bo, slack, BO)
        policy = {
            "mode": "quorum",
            "required": 2,
            "approvers": [hub.owner.user.email, bo.user.email],
        }
        interaction_id = await hub.ask(title="Move the DNS?", policy=policy)
        ada_copy = await card_in(slack, ada_channel, "Move the DNS?")
        bo_copy = await card_in(slack, bo_channel, "Move the DNS?")
        assert "Needs 2 of 2 approvals: Ada, bo." in ada_copy.all_text

        await slack.press(ADA, ada_copy, "Approve")
        await eventually(lambda: "Your vote is recorded: 1 of 2 approvals." in ada_copy.all_text)
        assert ada_copy.controls() == []  # a voter is not asked again
        await eventually(lambda: "1 of 2 approvals so far." in bo_copy.all_text)
        assert bo_copy.buttons() == ["Approve", "Reject"]
        assert await status(interaction_id) == InteractionStatus.PENDING

        await slack.press(BO, bo_copy, "Approve")
        await eventually(lambda: "by bo via Slack" in ada_copy.all_text)
        await settled(bo_copy)
        assert await status(interaction_id) == InteractionStatus.RESOLVED


async def test_an_action_edited_in_a_modal(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Run the users migration?", action=MIGRATION)
        message = await card_in(slack, channel, "Run the users migration?")
        assert message.buttons() == ["Approve", "Reject", "Edit and approve…"]
        assert "ALTER TABLE users ADD plan text" in message.all_text
        await slack.press(ADA, message, "Edit and approve")
        modal = await eventually(lambda: slack.open_view(ADA))
        # One input per editable field, by name (PostgreSQL's JSON keeps its own key order).
        inputs = {b["label"]["text"]: b for b in modal.view["blocks"] if b["type"] == "input"}
        assert {name: b["element"].get("initial_value") for name, b in inputs.items()} == {
            "statements": "ALTER TABLE users ADD plan text",
            "batchSize": "500",
        }
        statements, batch_size = inputs["statements"]["block_id"], inputs["batchSize"]["block_id"]
        refused = await slack.submit(
            ADA, modal, {statements: "ALTER TABLE users ADD plan text", batch_size: "a lot"}
        )
        assert refused and refused["response_action"] == "errors"
        assert "batchSize" in refused["errors"][batch_size]
        assert await status(interaction_id) == InteractionStatus.PENDING
        edited = {statements: "ALTER TABLE users ADD plan text\nANALYZE users", batch_size: "100"}
        assert await slack.submit(ADA, modal, edited) is None  # closes the modal
        await settled(message)
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.response["action"]["fields"]["batchSize"] == 100
        assert interaction.response["action"]["fields"]["statements"][-1] == "ANALYZE users"
        assert "edited from" in message.all_text


async def test_a_high_risk_edit_asks_once_more(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Migrate prod?", risk="high", action=MIGRATION)
        message = await card_in(slack, channel, "Migrate prod?")
        await slack.press(ADA, message, "Edit and approve")
        modal = await eventually(lambda: slack.open_view(ADA))
        blocks = {
            b["label"]["text"]: b["block_id"] for b in modal.view["blocks"] if b["type"] == "input"
        }
        edits = {blocks["statements"]: "ALTER TABLE users ADD plan text", blocks["batchSize"]: "50"}
        second = await slack.submit(ADA, modal, edits)
        assert second and second["response_action"] == "update"
        shown = "\n".join(b.get("text", {}).get("text", "") for b in modal.view["blocks"])
        assert "High risk" in shown and "batchSize:\n50" in shown
        assert modal.view["submit"]["text"] == "Yes, approve"
        assert await status(interaction_id) == InteractionStatus.PENDING
        assert await slack.submit(ADA, modal, {}) is None
        await settled(message)
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.response["action"]["fields"]["batchSize"] == 50


async def test_a_long_review_links_to_the_web_card(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        await hub.ask(type="review", title="Review the plan", content="step\n" * 1000)
        message = await card_in(slack, channel, "Review the plan")
        assert "too long to show here" in message.all_text and "step" not in message.all_text
        [link] = message.controls()
        assert link["text"]["text"] == "Open the card on the web"
        assert link["url"].startswith("http://hub.test/a/")


async def test_two_approvals_of_a_task_answered_together(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        cards = await approvals_of_one_task(hub, ("Migrate the database?", "Restart the workers?"))
        batch = await card_in(slack, channel, "2 approvals wait in “Ship the release”")
        assert "High risk" in batch.all_text
        await slack.press(ADA, batch, "Approve all (2)")
        await eventually(lambda: batch.buttons() == ["⛔ Yes, approve all (2)", "Cancel"])
        assert [await status(c) for c in cards] == [InteractionStatus.PENDING] * 2
        await slack.press(ADA, batch, "Yes, approve all")
        await settled(batch)
        assert batch.all_text.count("by Ada via Slack") == 2
        assert [await status(c) for c in cards] == [InteractionStatus.RESOLVED] * 2
        for title in ("Migrate the database?", "Restart the workers?"):  # each one's own copy
            await settled(await card_in(slack, channel, title))


async def test_a_decision_elsewhere_turns_the_message_read_only(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Rotate the keys?")
        message = await card_in(slack, channel, "Rotate the keys?")
        await respond_to_interaction(
            hub.owner.workspace.id,
            interaction_id,
            {"optionId": "reject"},
            responder=f"user:{hub.owner.user.id}",
            via="web",
        )
        await settled(message)
        assert "Reject — by Ada via the web" in message.all_text
        # A press on the copy from before (a client that missed the redraw) is told why.
        stale = SlackMessage(message.channel, message.ts, "", message.history[0])
        await slack.press(ADA, stale, "Approve")
        told = await eventually(lambda: slack.told(ADA))
        assert told[0].startswith("Already decided by Ada via the web")


async def test_a_failed_task_is_told(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
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
            {"taskId": task_id, "status": "failed", "error": "disk <!channel> full"},
            actor=f"agent:{hub.agent.id}",
        )
        told = await card_in(slack, channel, "failed")
        assert "Reason: disk <!channel> full" in told.all_text
        assert "&lt;!channel&gt;" not in told.all_text  # plain text needs no escaping
        assert told.controls()[0]["url"].endswith(f"/tasks/{task_id}")


async def approvals_of_one_task(hub: Hub, titles: tuple[str, ...]) -> list[str]:
    """A task of the hub's agent waiting on approvals (the first high risk); their ids."""
    ws, agent = hub.owner.workspace.id, f"agent:{hub.agent.id}"
    task_id = new_id("task")
    await append_event(
        ws,
        "task.created",
        {"taskId": task_id, "title": "Ship the release", "targetAgentId": hub.agent.id},
        actor=f"user:{hub.owner.user.id}",
    )
    await append_event(ws, "task.accepted", {"taskId": task_id}, actor=agent)
    cards = []
    for number, title in enumerate(titles):
        card = {"id": new_id("interaction"), "type": "approval", "title": title}
        if number == 0:
            card |= {"risk": "high", "impact": "Locks the orders table"}
        await append_event(
            ws, "interaction.requested", {"interaction": card}, actor=agent, task_id=task_id
        )
        cards.append(card["id"])
    return cards


async def test_a_withdrawn_card_closes_in_slack_saying_why(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        interaction_id = await hub.ask(title="Run `git push --force`?")
        message = await card_in(slack, channel, "git push")
        shown = SlackMessage(message.channel, message.ts, "", list(message.blocks))
        await append_event(
            hub.owner.workspace.id,
            "interaction.withdrawn",
            {"interactionId": interaction_id, "reason": "answered_in_terminal",
             "note": "<!channel> pushed"},
            actor=f"agent:{hub.agent.id}",
        )  # fmt: skip
        await settled(message)
        said = "Answered in the terminal; this card takes no answer. “<!channel> pushed”"
        assert said in message.all_text  # the note as plain text
        await slack.press(ADA, shown, "Approve")  # a press on the copy shown before
        told = await eventually(lambda: slack.told(ADA))
        assert told[0].startswith("Answered in the terminal")
        assert (await Interaction.get(id=interaction_id)).status != InteractionStatus.RESOLVED
