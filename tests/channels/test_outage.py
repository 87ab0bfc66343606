"""SMTP and the Bot API go away in the middle of 100 notifications, then come back."""

from __future__ import annotations

from collections import Counter

from hub.core.store.notification_models import Notification, NotificationStatus
from tests.channels.conftest import eventually
from tests.channels.peers import BotApiPeer, SmtpPeer

ADA = 4242
CARDS = 100


async def test_every_notification_is_delivered_once_after_an_outage(
    make_hub, smtp: SmtpPeer, bot_api: BotApiPeer
) -> None:
    settings = {
        "smtp_url": smtp.url,
        "telegram_bot_token": bot_api.token,
        "telegram_api_url": bot_api.url,
    }
    titles = [f"Card #{n:03d}" for n in range(CARDS)]
    async with make_hub(**settings) as hub:
        await hub.link_telegram(hub.owner, bot_api, ADA)
        for title in titles[:30]:
            await hub.ask(title=title)
        smtp.stop()
        await bot_api.stop()
        for title in titles[30:]:
            await hub.ask(title=title)

        async def retried() -> bool:
            failing = await Notification.filter(
                status=NotificationStatus.PENDING, attempts__gte=2
            ).values_list("surface", flat=True)
            return {"email", "telegram"} <= set(failing)

        await eventually(retried)
        pending = await Notification.filter(status=NotificationStatus.PENDING).count()
        smtp.start()
        await bot_api.start()

        async def all_sent() -> bool:
            return not await Notification.filter(status=NotificationStatus.PENDING).exists()

        await eventually(all_sent, within=90)
        retries = sum(await Notification.all().values_list("attempts", flat=True)) - 2 * CARDS
        rows = await Notification.all().values_list("status", flat=True)

    # SMTP cannot promise exactly once: a cut between the server storing a mail and the
    # hub reading its "250" leaves the hub to send it again. What it can promise is that
    # the repeat is the same mail, by Message-ID, which mailboxes file as one.
    ids_by_title: dict[str, set[str]] = {}
    for m in smtp.messages:
        title = str(m["Subject"]).split(": ", 1)[1]
        ids_by_title.setdefault(title, set()).add(str(m["Message-ID"]))
    mails = Counter({title: len(ids) for title, ids in ids_by_title.items()})
    repeats = len(smtp.messages) - sum(mails.values())
    chats = Counter(
        title
        for m in bot_api.chat(ADA)
        for title in titles
        if m.text.startswith(f"<b>{title}") or f"{title}" in m.text.splitlines()[0]
    )
    assert mails == Counter(titles), "each card mailed once, any repeat under its Message-ID"
    assert repeats <= smtp.sessions_cut, "a mail repeated only where the cut lost its reply"
    assert chats == Counter(titles), "each card sent to Telegram exactly once"
    assert Counter(rows) == Counter({NotificationStatus.SENT: 2 * CARDS})
    print(
        f"pending at restart: {pending}; failed attempts retried: {retries};"
        f" mails repeated: {repeats}"
    )
