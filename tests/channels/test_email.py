"""Email against a real SMTP server: cards, signed links, confirmation pages, outcomes."""

from __future__ import annotations

import re
from email.message import EmailMessage

from hub.core.models import Event, Interaction, InteractionStatus
from hub.core.notification_models import Notification, NotificationStatus, UsedLink
from hub.core.preferences import update_preferences
from tests.channels.conftest import eventually
from tests.channels.peers import SmtpPeer


def links(mail: EmailMessage) -> list[str]:
    plain = mail.get_body(preferencelist=("plain",))
    assert plain is not None
    return re.findall(r"http://hub\.test(/a/[\w.\-]+)", plain.get_content())


async def test_an_approval_mail_decides_only_on_post(make_hub, smtp: SmtpPeer) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        interaction_id = await hub.ask(description="Schema change", impact="5 min downtime")
        mail = (await eventually(lambda: smtp.to("owner@example.com")))[0]
        assert "Run the migration?" in str(mail["Subject"])
        html = mail.get_body(preferencelist=("html",))
        assert html is not None and "5 min downtime" in html.get_content()
        approve, reject = links(mail)

        for method in ("GET", "HEAD"):
            page = await hub.client.open(approve, method=method)
            assert page.status_code == 200
        page = await hub.client.get(approve)
        assert "Approve" in await page.get_data(as_text=True)
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.PENDING

        decided = await hub.client.post(approve, form={})
        assert decided.status_code == 200
        interaction = await Interaction.get(id=interaction_id)
        assert interaction.status == InteractionStatus.RESOLVED
        assert interaction.responded_via == "email"
        assert interaction.response == {"optionId": "approve"}

        again = await hub.client.get(approve)
        assert "by Ada via email" in await again.get_data(as_text=True)
        other = await hub.client.post(reject, form={})
        assert other.status_code == 409
        assert "Already decided by Ada via email" in await other.get_data(as_text=True)
        row = await Notification.get(interaction_id=interaction_id, kind="waiting")
        assert row.status == NotificationStatus.SENT


async def _nothing_changes(hub, *links: str) -> None:
    """GET and HEAD on each link leave the log and the spent-link table as they were."""
    before = (await Event.all().count(), await UsedLink.all().count())
    for link in links:
        for method in ("GET", "HEAD"):
            await hub.client.open(link, method=method)
    assert (await Event.all().count(), await UsedLink.all().count()) == before


async def test_unusable_links_get_a_clear_page_and_change_nothing(make_hub, smtp: SmtpPeer) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        await hub.ask(title="First card")
        second = await hub.ask(title="Second card")
        mails = await eventually(lambda: len(smtp.to("owner@example.com")) == 2 and smtp.messages)
        by_title = {str(m["Subject"]).split(": ", 1)[1]: links(m) for m in mails}
        approve_first, _ = by_title["First card"]
        approve_second, reject_second = by_title["Second card"]

        tampered = approve_second[:-3] + ("AAA" if not approve_second.endswith("AAA") else "BBB")
        page = await hub.client.get(tampered)
        assert page.status_code == 400
        assert "not valid" in await page.get_data(as_text=True)

        bob = await hub.person("bob")
        signer = hub.runtime.signer
        for_bob = "/a/" + signer.token(
            workspace_id=hub.owner.workspace.id,
            interaction_id=second,
            user_id=bob.user.id,
            address=bob.user.email,
            via="email",
            option_id="approve",
        )
        page = await hub.client.post(for_bob, form={})
        assert page.status_code == 403
        assert "sent to someone else" in await page.get_data(as_text=True)
        moved = "/a/" + signer.token(
            workspace_id=hub.owner.workspace.id,
            interaction_id=second,
            user_id=hub.owner.user.id,
            address="old-address@example.com",
            via="email",
            option_id="approve",
        )
        assert (await hub.client.post(moved, form={})).status_code == 403

        assert (await hub.client.post(approve_first, form={})).status_code == 200
        replayed = await hub.client.post(approve_first, form={})
        assert replayed.status_code == 410
        body = await replayed.get_data(as_text=True)
        assert "used already" in body and "by Ada via email" in body

        signer.max_age_s = -1  # every link is now past its age
        expired = await hub.client.post(reject_second, form={})
        assert expired.status_code == 410
        assert "expired" in await expired.get_data(as_text=True)
        await _nothing_changes(hub, approve_first, approve_second, reject_second, tampered, for_bob)
        signer.max_age_s = 3600
        await _nothing_changes(hub, approve_first, approve_second, reject_second, tampered, for_bob)
        assert (await Interaction.get(id=second)).status == InteractionStatus.PENDING


async def test_mails_follow_the_language_of_the_person(make_hub, smtp: SmtpPeer) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        await update_preferences(hub.owner.user.id, {"language": "zh-Hans"})
        await hub.ask(title="部署到生产环境？", risk="high")
        mail = (await eventually(lambda: smtp.to("owner@example.com")))[0]
        assert "需要你" in str(mail["Subject"])
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None and "高风险" in plain.get_content()
        page = await hub.client.get(links(mail)[0])
        assert "确认你的回答" in await page.get_data(as_text=True)


async def test_without_smtp_mails_are_files_listed_for_the_developer(make_hub) -> None:
    from hub.core.accounts import create_api_token, create_user

    async with make_hub() as hub:
        await hub.ask(title="Rotate the keys?")
        outbox = hub.runtime.settings.data_dir / "outbox"
        files = await eventually(lambda: list(outbox.glob("*.eml")))
        assert len(files) == 1
        _, token = await create_api_token(hub.owner.user, "outbox")
        owner = {"Authorization": f"Bearer {token}"}
        listing = await hub.client.get("/dev/outbox", headers=owner)
        assert "Rotate the keys?" in await listing.get_data(as_text=True)
        shown = await hub.client.get(f"/dev/outbox/{files[0].name}", headers=owner)
        assert "/a/" in await shown.get_data(as_text=True)
        assert "sandbox" in shown.headers["Content-Security-Policy"]
        # Nobody else reads them: not a stranger, not someone signed in as another person.
        anonymous = await hub.client.get("/dev/outbox")
        assert anonymous.status_code == 401
        other, _ = await create_user("someone.else@example.com", "correct horse")
        _, other_token = await create_api_token(other, "outbox")
        stranger = {"Authorization": f"Bearer {other_token}"}
        listed = await hub.client.get("/dev/outbox", headers=stranger)
        assert "Rotate the keys?" not in await listed.get_data(as_text=True)
        refused = await hub.client.get(f"/dev/outbox/{files[0].name}", headers=stranger)
        assert refused.status_code == 404
