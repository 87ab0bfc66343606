"""Roles on the channels: links and buttons already sent stop answering for a viewer or a
removed member, and nothing waiting is sent to them any more."""

from __future__ import annotations

from hub.channels.wording import not_allowed_to_answer_text
from hub.core.log.events import last_sequence
from hub.core.notify.outbox import Outcome
from hub.core.people.invitations import accept, invite
from hub.core.people.members import change_role, remove_member
from hub.core.store.models import Interaction, InteractionStatus, Role
from hub.core.store.notification_models import Notification, NotificationKind, UsedLink
from tests.channels.answering import mail_for, mail_links
from tests.channels.conftest import Hub, Person
from tests.channels.peers import SmtpPeer


async def member(hub: Hub, name: str) -> Person:
    person = await hub.person(name)
    _, token = await invite(hub.owner.workspace.id, Role.MEMBER, by=hub.owner.user, secret_key="s")
    await accept(token, person.user)
    return person


async def test_a_viewers_mail_links_and_queued_cards_stop_answering(
    make_hub, smtp: SmtpPeer
) -> None:  # type: ignore[no-untyped-def]
    async with make_hub(smtp_url=smtp.url) as hub:
        bea = await member(hub, "bea")
        ws = hub.owner.workspace.id
        interaction_id = await hub.ask(title="Rotate the keys?")
        mail = await mail_for(smtp, bea, "Rotate the keys?")
        approve = mail_links(mail)["Approve"]
        row = await Notification.get(
            user_id=bea.user.id, interaction_id=interaction_id, kind=NotificationKind.WAITING
        )

        await change_role(ws, bea.user.id, Role.VIEWER, by=hub.owner.user)
        before = (await last_sequence(ws), await UsedLink.all().count())
        for method in ("GET", "POST"):
            page = await hub.client.open(approve, method=method, form={})
            assert page.status_code == 403, method
            assert not_allowed_to_answer_text() in await page.get_data(as_text=True)
        assert (await last_sequence(ws), await UsedLink.all().count()) == before
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING
        # The same card, had it still been waiting in the outbox, is not sent to her now.
        assert await hub.runtime.deliver(row) == Outcome.SKIPPED

        await remove_member(ws, bea.user.id, by=hub.owner.user)
        page = await hub.client.post(approve, form={})
        assert page.status_code == 403
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING
