"""Email against a real SMTP server: cards, signed links, confirmation pages, outcomes."""

from __future__ import annotations

import re
from email.message import EmailMessage

from hub.core.models import Interaction, InteractionStatus
from hub.core.notification_models import Notification, NotificationStatus
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
