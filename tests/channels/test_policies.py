"""Approval policies on the mail surface: only the named approvers are asked, a vote by a
mail link says how far the votes are, and the link does not ask the voter twice."""

from __future__ import annotations

from hub.core.ids import new_id
from hub.core.store.models import Interaction, Membership, Role
from tests.channels.answering import api_respond, mail_for, mail_links
from tests.channels.conftest import eventually
from tests.channels.peers import SmtpPeer


async def test_a_quorum_over_mail_links_and_the_api(make_hub, smtp: SmtpPeer) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(smtp_url=smtp.url) as hub:
        bo, cy = await hub.person("bo"), await hub.person("cy")
        for person in (bo, cy):
            await Membership.create(
                id=new_id("membership"),
                workspace=hub.owner.workspace,
                user=person.user,
                role=Role.MEMBER,
            )
        # Bo belongs to the owner's workspace now: his token answers there.
        bo.workspace = hub.owner.workspace
        policy = {
            "mode": "quorum",
            "required": 2,
            "approvers": [hub.owner.user.email, bo.user.email],
        }
        interaction_id = await hub.ask(title="Move the DNS?", policy=policy)

        mail = await mail_for(smtp, hub.owner, "Move the DNS?")
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None
        assert "Needs 2 of 2 approvals: Ada, bo." in plain.get_content()
        await mail_for(smtp, bo, "Move the DNS?")
        assert smtp.to(cy.user.email) == []  # not named: not asked

        link = mail_links(mail)["Approve"]
        voted = await hub.client.post(link, form={})
        page = await voted.get_data(as_text=True)
        assert voted.status_code == 200
        assert "Your vote is recorded: 1 of 2 approvals." in page
        # The mail's other link does not ask a voter again.
        other = await hub.client.get(mail_links(mail)["Reject"])
        page = await other.get_data(as_text=True)
        assert "Your vote is recorded" in page and "<form" not in page

        refused = await api_respond(hub, cy, interaction_id, {"optionId": "approve"})
        assert refused.status_code == 404  # cy's token is for cy's own workspace
        decided = await api_respond(hub, bo, interaction_id, {"optionId": "approve"})
        assert decided.status_code == 200, await decided.get_data(as_text=True)
        body = await decided.get_json()
        assert body["status"] == "resolved" and len(body["response"]["votes"]) == 2
        await eventually(lambda: Interaction.filter(id=interaction_id, status="resolved").exists())
