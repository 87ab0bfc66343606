"""A task's approvals answered together by email: the batch mail, its links' pages, a
high-risk confirmation, a card decided elsewhere first, and links that cannot be used.

(Answering a batch by email end to end, beside the other surfaces, is in
``tests/e2e/parity``; these are the rules of the pages.)"""

from __future__ import annotations

import re
from typing import Any

from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.store.models import Event, Interaction, InteractionStatus
from tests.channels.answering import api_respond, mail_for
from tests.channels.conftest import Hub, eventually
from tests.channels.peers import SmtpPeer

BATCH_LINK = r"^- (.+?): (http://hub\.test(/b/[\w.\-]+))\r?$"


async def task_with_approvals(hub: Hub, *risks: str | None) -> tuple[str, list[str]]:
    """A task of the agent's asking one approval per risk given, at once."""
    ws, task_id = hub.owner.workspace.id, new_id("task")
    await append_event(
        ws,
        "task.created",
        {"taskId": task_id, "title": "Release", "targetAgentId": hub.agent.id},
        actor=f"user:{hub.owner.user.id}",
    )
    await append_event(ws, "task.accepted", {"taskId": task_id}, actor=f"agent:{hub.agent.id}")
    ids = []
    for number, risk in enumerate(risks, 1):
        card: dict[str, Any] = {"id": new_id("interaction"), "type": "approval"}
        card["title"] = f"Step {number}"
        if risk:
            card["risk"] = risk
        await append_event(
            ws,
            "interaction.requested",
            {"interaction": card},
            actor=f"agent:{hub.agent.id}",
            task_id=task_id,
        )
        ids.append(card["id"])
    return task_id, ids


async def batch_links(smtp: SmtpPeer, hub: Hub, count: int) -> dict[str, str]:
    mail = await mail_for(smtp, hub.owner, f"{count} approvals wait in “Release”")
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    text = plain.get_content()
    assert f"Approve all ({count})" in text and f"Reject all ({count})" in text
    return {label.split(" (")[0]: path for label, _, path in re.findall(BATCH_LINK, text, re.M)}


async def test_approve_all_asks_to_confirm_a_high_risk_card_then_decides_each(
    make_hub, smtp: SmtpPeer
) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(smtp_url=smtp.url) as hub:
        _, ids = await task_with_approvals(hub, "high", None)
        links = await batch_links(smtp, hub, 2)

        shown = await hub.client.get(links["Approve all"])  # a GET shows, decides nothing
        page = await shown.get_data(as_text=True)
        assert shown.status_code == 200 and "Step 1" in page and "Step 2" in page
        assert 'name="confirm"' in page
        unconfirmed = await hub.client.post(links["Approve all"], form={})
        assert unconfirmed.status_code == 422
        assert "needs the confirmation ticked" in await unconfirmed.get_data(as_text=True)
        assert {i.status for i in await Interaction.filter(id__in=ids)} == {"pending"}

        done = await hub.client.post(links["Approve all"], form={"confirm": "yes"})
        assert done.status_code == 200
        assert "Recorded 2 answers." in await done.get_data(as_text=True)
        decided = await Interaction.filter(id__in=ids)
        assert {(i.status, i.responded_via) for i in decided} == {
            (InteractionStatus.RESOLVED, "email")
        }
        assert all(i.response["optionId"] == "approve" for i in decided)
        events = await Event.filter(type="interaction.resolved")
        assert len({e.payload.get("batchId") for e in events}) == 1  # one batch

        again = await hub.client.post(links["Approve all"], form={"confirm": "yes"})
        assert again.status_code == 410
        assert "used already" in await again.get_data(as_text=True)
        other = await hub.client.post(links["Reject all"], form={})
        assert other.status_code == 409  # nothing left open: the outcomes show
        assert "by Ada via email" in await other.get_data(as_text=True)


async def test_item_by_item_applies_the_rest_when_one_was_decided_first(
    make_hub, smtp: SmtpPeer
) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(smtp_url=smtp.url) as hub:
        _, ids = await task_with_approvals(hub, None, None, None)
        links = await batch_links(smtp, hub, 3)
        nothing = await hub.client.post(links["Answer item by item"], form={})
        assert nothing.status_code == 422
        assert "Pick an answer" in await nothing.get_data(as_text=True)

        first = await api_respond(hub, hub.owner, ids[1], {"optionId": "reject"})
        assert first.status_code == 200
        picks = {f"choice-{ids[0]}": "approve", f"choice-{ids[1]}": "approve"}
        picks[f"choice-{ids[2]}"] = "reject"
        done = await hub.client.post(links["Answer item by item"], form=picks)
        page = await done.get_data(as_text=True)
        assert done.status_code == 200 and "Recorded 2 answers." in page
        assert "Step 2" in page and "by Ada via the API" in page
        got = {i.id: (i.response["optionId"], i.responded_via) for i in await Interaction.all()}
        assert got == {
            ids[0]: ("approve", "email"),
            ids[1]: ("reject", "api"),
            ids[2]: ("reject", "email"),
        }


async def test_a_batch_link_is_bound_to_its_person(make_hub, smtp: SmtpPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(smtp_url=smtp.url) as hub:
        _, ids = await task_with_approvals(hub, None, None)
        links = await batch_links(smtp, hub, 2)
        tampered = links["Approve all"][:-4] + "AAAA"
        refused = await hub.client.post(tampered, form={})
        assert refused.status_code == 400
        assert "not valid" in await refused.get_data(as_text=True)
        card_link_path = links["Approve all"].replace("/b/", "/a/")
        assert (await hub.client.get(card_link_path)).status_code == 400  # salts apart
        assert {i.status for i in await Interaction.filter(id__in=ids)} == {"pending"}
        await eventually(lambda: len(smtp.to(hub.owner.user.email)) == 3)  # 2 cards, 1 batch
