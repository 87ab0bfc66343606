"""Email against a real SMTP server: cards, signed links, confirmation pages, outcomes."""

from __future__ import annotations

import re
from email.message import EmailMessage

from hub.core.log.events import append_event
from hub.core.notify.preferences import update_preferences
from hub.core.store.models import Event, Interaction, InteractionStatus
from hub.core.store.notification_models import Notification, NotificationStatus, UsedLink
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


async def test_mails_and_their_pages_speak_the_language_of_the_person(
    make_hub, smtp: SmtpPeer
) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        await update_preferences(hub.owner.user.id, {"language": "zh-Hans"})
        interaction_id = await hub.ask(title="部署到生产环境？", risk="high", impact="会重启服务")
        mail = (await eventually(lambda: smtp.to("owner@example.com")))[0]
        assert str(mail["Subject"]) == "deploy-bot 需要你：部署到生产环境？"
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None
        text = plain.get_content()
        assert "deploy-bot 正在等待你的回答。" in text and "⛔ 高风险" in text
        assert "你能做什么" in text and "会重启服务" in text
        html = mail.get_body(preferencelist=("html",))
        assert html is not None and '<html lang="zh-Hans">' in html.get_content()
        approve, reject = links(mail)

        # The page speaks the recipient's language, whatever the browser prefers.
        english = {"Accept-Language": "en-GB,en;q=0.9"}
        page = await (await hub.client.get(approve, headers=english)).get_data(as_text=True)
        assert '<html lang="zh-Hans">' in page
        assert "确认你的回答" in page and "你将回答：Approve" in page and "备注（可选）" in page
        decided = await hub.client.post(approve, form={}, headers=english)
        assert "通过邮件决定" in await decided.get_data(as_text=True)
        late = await hub.client.post(reject, form={}, headers=english)
        assert late.status_code == 409
        assert "已由 Ada 通过邮件决定" in await late.get_data(as_text=True)
        used = await hub.client.get(approve, headers=english)
        assert "此链接已被使用。" in await used.get_data(as_text=True)

        # A link cut short names nobody: its page follows the browser.
        for browser, words in (("zh-CN,zh;q=0.9", "此链接无效"), ("en", "This link is not valid")):
            cut = await hub.client.get(approve[:-6], headers={"Accept-Language": browser})
            assert cut.status_code == 400 and words in await cut.get_data(as_text=True)

        task_id = (await Interaction.get(id=interaction_id)).task_id
        await append_event(
            hub.owner.workspace.id,
            "task.status_changed",
            {"taskId": task_id, "status": "failed", "error": "disk full"},
            actor=f"agent:{hub.agent.id}",
        )

        def failure_mail() -> EmailMessage | None:
            mails = smtp.to("owner@example.com")
            return next((m for m in mails if "任务失败" in str(m["Subject"])), None)

        told = await eventually(failure_mail)
        assert str(told["Subject"]) == "任务失败：Ship the release"
        body = told.get_body(preferencelist=("plain",))
        assert body is not None
        assert "deploy-bot 的任务“Ship the release”失败了。" in body.get_content()
        assert "原因：disk full" in body.get_content() and "打开任务" in body.get_content()


async def test_without_smtp_mails_are_files_listed_for_the_developer(make_hub) -> None:
    from hub.core.people.accounts import create_api_token, create_user

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
