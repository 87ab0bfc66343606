"""The Feishu channel in this process, against a local Feishu platform: cards, presses."""

from __future__ import annotations

import threading

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Interaction, InteractionStatus, Membership, Role
from hub.core.store.notification_models import DeliveredCard
from hub.core.work.interactions import respond_to_interaction
from tests.channels.conftest import eventually, feishu_chat, feishu_settings
from tests.channels.feishu_peer import FeishuMessage, FeishuPeer
from tests.channels.test_telegram_batches import TITLES, three_approvals

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
    # The hub stopped: its long connection's thread with it.
    assert not [t for t in threading.enumerate() if t.name == "feishu-long-connection"]


async def test_only_the_linked_person_can_answer(make_hub, feishu: FeishuPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        bo = await hub.person("bo")
        await hub.link_feishu(bo, feishu, "ou_bo")  # linked, but the card is not his
        interaction_id = await hub.ask(title="Deploy?", risk="high")
        card = await feishu_card(feishu, ADA, "Deploy?")
        drawn = card.content
        for stranger in ("ou_bo", "ou_nobody"):
            refused = await feishu.press(stranger, card, "Approve")
            assert refused == {
                "toast": {"type": "error", "content": "This card is for someone else."}
            }
        assert card.content == drawn  # nothing redrawn: no confirmation was started
        row = await DeliveredCard.get(surface="feishu", interaction_id=interaction_id)
        assert "confirm" not in row.state
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING


async def test_agent_text_stays_plain_and_pings_nobody(make_hub, feishu: FeishuPeer) -> None:  # type: ignore[no-untyped-def]
    hostile = '<at user_id="all">everyone</at> **bold** [link](https://evil.test) <font>'
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        await hub.ask(
            title=f"Deploy {hostile}?",
            description=hostile,
            impact=hostile,
            details={"note": hostile},
            options=[{"id": "go", "label": hostile}, {"id": "stop", "label": "Stop"}],
        )
        card = await feishu_card(feishu, ADA, "Deploy <at")
        assert not {"lark_md", "markdown"} & card.tags()
        assert hostile in card.texts()  # shown exactly as written, as plain text
        assert card.card["header"]["title"] == {
            "tag": "plain_text",
            "content": f"Deploy {hostile}?",
        }
        await feishu.press(ADA, card, hostile)
        assert not {"lark_md", "markdown"} & card.tags()


async def test_a_review_too_long_for_a_card_links_to_the_whole_card(  # type: ignore[no-untyped-def]
    make_hub, feishu: FeishuPeer
) -> None:
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        await hub.ask(type="review", title="Review the plan", content="step\n" * 2000)
        card = await feishu_card(feishu, ADA, "Review the plan")
        [link] = card.buttons()
        assert link["text"]["content"] == "Open the card on the web"
        assert link["behaviors"][0]["default_url"].startswith("http://hub.test/a/")
        assert "step\nstep" not in card.text  # never a part of it to decide on


async def test_a_quorum_counts_votes_in_every_copy(make_hub, feishu: FeishuPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(**feishu_settings(feishu)) as hub:
        bo = await hub.person("bo")
        await Membership.create(
            id=new_id("membership"), workspace=hub.owner.workspace, user=bo.user, role=Role.MEMBER
        )
        await hub.link_feishu(hub.owner, feishu, ADA)
        await hub.link_feishu(bo, feishu, "ou_bo")
        policy = {
            "mode": "quorum",
            "required": 2,
            "approvers": [hub.owner.user.email, bo.user.email],
        }
        interaction_id = await hub.ask(title="Move the DNS?", policy=policy)
        ada_card = await feishu_card(feishu, ADA, "Move the DNS?")
        bo_card = await feishu_card(feishu, "ou_bo", "Move the DNS?")
        assert "👥 Needs 2 of 2 approvals: Ada, bo." in ada_card.texts()

        voted = await feishu.press(ADA, ada_card, "Approve")
        assert voted["toast"]["content"] == "Your vote is recorded: 1 of 2 approvals."
        assert ada_card.buttons() == []  # a voter is not asked again
        await eventually(lambda: "1 of 2 approvals so far." in bo_card.texts())
        assert bo_card.labels() == ["✅ Approve", "✖️ Reject"]

        await feishu.press("ou_bo", bo_card, "Approve")
        decided = await Interaction.get(id=interaction_id)
        assert decided.status == InteractionStatus.RESOLVED and len(decided.response["votes"]) == 2
        await eventually(lambda: ada_card.controls() == [] and "via Feishu" in ada_card.text)


async def test_approve_all_and_item_by_item_in_a_batch_card(  # type: ignore[no-untyped-def]
    make_hub, feishu: FeishuPeer
) -> None:
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        _task_id, cards = await three_approvals(hub)
        heading = "3 approvals wait in “Ship the release”"
        batch = await feishu_card(feishu, ADA, heading)
        assert all(title in batch.text for title in TITLES) and "⛔ High risk" in batch.text
        first = await feishu_card(feishu, ADA, "2 approvals wait in “Ship the release”")
        await eventually(lambda: "Replaced by a newer message below." in first.texts())
        assert first.buttons() == []

        # Item by item: one card answered from its own message...
        single = await feishu_card(feishu, ADA, TITLES[1])
        await feishu.press(ADA, single, "Reject")
        await eventually(lambda: any("Reject — by Ada via Feishu" in t for t in batch.texts()))
        assert batch.labels() == ["✅ Approve all (2)", "✖️ Reject all (2)"]

        # ...then the rest together: high risk among them, so a confirming press first.
        asked = await feishu.press(ADA, batch, "Approve all (2)")
        assert asked["toast"]["content"] == "Tap again to confirm."
        assert (await Interaction.get(id=cards[0])).status == InteractionStatus.PENDING
        done = await feishu.press(ADA, batch, "Yes, approve all (2)")
        assert done["toast"]["content"] == "Recorded 2 answers."
        decided = [await Interaction.get(id=c) for c in cards]
        assert [i.response for i in decided] == [
            {"optionId": "approve"},
            {"optionId": "reject"},
            {"optionId": "approve"},
        ]
        assert batch.buttons() == [] and batch.text.count("by Ada via Feishu") == 3
        for title in TITLES:
            own = await feishu_card(feishu, ADA, title)
            await eventually(lambda own=own: own.controls() == [] and "via Feishu" in own.text)


async def test_an_action_too_long_for_a_form_is_edited_on_the_web(  # type: ignore[no-untyped-def]
    make_hub, feishu: FeishuPeer
) -> None:
    script = "\n".join(f"UPDATE t SET n = {n};" for n in range(100))  # over 1,000 characters
    action = {"kind": "db.script", "fields": {"sql": script}, "editable": ["sql"]}
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
        interaction_id = await hub.ask(title="Run the script?", action=action)
        card = await feishu_card(feishu, ADA, "Run the script?")
        assert card.labels() == ["✅ Approve", "✖️ Reject", "Edit and approve on the web"]
        assert script in card.texts()  # the exact action, whole, as plain text
        assert [c["tag"] for c in card.controls()] == ["button"] * 3  # no form field
        await feishu.press(ADA, card, "Approve")  # as shown: bound to what the card showed
        decided = await Interaction.get(id=interaction_id)
        assert decided.response["optionId"] == "approve" and "actionHash" in decided.response


async def test_a_failed_task_is_told_with_a_link_to_it(make_hub, feishu: FeishuPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, ADA)
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
            {"taskId": task_id, "status": "failed", "error": 'disk <at user_id="all">full</at>'},
            actor=f"agent:{hub.agent.id}",
        )
        told = await feishu_card(feishu, ADA, "failed")
        assert 'Reason: disk <at user_id="all">full</at>' in told.texts()
        assert not {"lark_md", "markdown"} & told.tags()
        [link] = told.buttons()
        assert link["behaviors"][0]["default_url"] == (
            f"http://hub.test/w/{hub.owner.workspace.id}/tasks/{task_id}"
        )
