"""Slack deliveries through the outbox: a 429 waited out as Slack asks, an outage that
delays and loses nothing, a post whose answer was lost that is not posted twice."""

from __future__ import annotations

import asyncio
import threading

from hub.core.store.models import Interaction, InteractionStatus
from hub.core.store.notification_models import Notification, NotificationStatus
from tests.channels.conftest import eventually, slack_settings
from tests.channels.slack_peer import SlackMessage, SlackPeer

ADA = "U0ADA"


def copies(slack: SlackPeer, channel: str, title: str) -> list[SlackMessage]:
    return [m for m in slack.conversation(channel) if title in m.all_text]


async def test_a_429_is_waited_out_as_slack_asks(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        slack.limits["chat.postMessage"] = [2]  # the next post: 429, Retry-After: 2
        interaction_id = await hub.ask(title="Scale the cluster?")
        await eventually(lambda: copies(slack, channel, "Scale the cluster?"), within=20)
        posts = [when for method, when in slack.calls if method == "chat.postMessage"]
        limited, delivered = posts[-2:]
        assert delivered - limited >= 2.0  # not before Slack said
        row = await eventually(
            lambda: Notification.get_or_none(
                interaction_id=interaction_id, surface="slack", status=NotificationStatus.SENT
            )
        )
        assert row.kind == "waiting" and row.attempts == 2
        assert len(copies(slack, channel, "Scale the cluster?")) == 1


async def test_an_outage_delays_cards_and_loses_none(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        await slack.stop()
        interaction_id = await hub.ask(title="Renew the certificate?")

        async def failed_twice() -> bool:
            row = await Notification.filter(interaction_id=interaction_id, surface="slack").first()
            return row is not None and row.attempts >= 2

        await eventually(failed_twice, within=20)
        assert not await Notification.filter(status=NotificationStatus.FAILED).exists()
        await slack.start()
        [message] = await eventually(lambda: copies(slack, channel, "Renew the certificate?"))
        # Socket Mode came back by itself: a press reaches the hub again.
        await eventually(lambda: slack.socket_open, within=20)
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: message.controls() == [])
        assert (await Interaction.get(id=interaction_id)).status == InteractionStatus.RESOLVED
        assert slack.connections >= 2
        assert len(copies(slack, channel, "Renew the certificate?")) == 1


async def test_a_post_whose_answer_was_lost_is_not_posted_twice(make_hub, slack: SlackPeer) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        slack.lose_answers["chat.postMessage"] = 1  # posted, but the hub hears a 502
        interaction_id = await hub.ask(title="Purge the cache?")
        [message] = await eventually(lambda: copies(slack, channel, "Purge the cache?"))

        async def sent() -> bool:
            row = await Notification.get(
                interaction_id=interaction_id, surface="slack", kind="waiting"
            )
            return row.status == NotificationStatus.SENT

        await eventually(sent, within=20)
        assert slack.called("conversations.history")  # looked for it, found it by metadata
        assert len(copies(slack, channel, "Purge the cache?")) == 1
        await slack.press(ADA, message, "Reject")  # the copy found is the one it redraws
        await eventually(lambda: "Reject — by Ada via Slack" in message.all_text)


async def test_a_socket_slack_refreshes_is_replaced_and_presses_still_arrive(
    make_hub, slack: SlackPeer
) -> None:
    async with make_hub(**slack_settings(slack)) as hub:
        channel = await hub.link_slack(hub.owner, slack, ADA)
        opened = slack.connections
        slack.ask_to_reconnect()
        await eventually(lambda: slack.connections == opened + 1 and slack.socket_open)
        interaction_id = await hub.ask(title="Flip the feature flag?")
        [message] = await eventually(lambda: copies(slack, channel, "Flip the feature flag?"))
        await slack.press(ADA, message, "Approve")
        await eventually(lambda: message.controls() == [])
        assert (await Interaction.get(id=interaction_id)).responded_via == "slack"


def _slack_sdk_tasks() -> list[asyncio.Task[object]]:
    return [
        task
        for task in asyncio.all_tasks()
        if not task.done() and "SocketModeClient" in repr(task.get_coro())
    ]


async def test_stopping_ends_every_task_and_thread_the_client_started(
    make_hub, slack: SlackPeer
) -> None:
    threads = {t.ident for t in threading.enumerate()}
    async with make_hub(**slack_settings(slack)) as hub:
        await hub.link_slack(hub.owner, slack, ADA)
        assert slack.socket_open and _slack_sdk_tasks()  # its receiver, monitor, processor
    assert _slack_sdk_tasks() == []

    # asyncio's own executor threads (name resolution) end with the loop; the database's
    # connection threads as they close; nothing else stays.
    def left() -> list[str]:
        started = [t for t in threading.enumerate() if t.ident not in threads]
        return [t.name for t in started if not t.name.startswith("asyncio_")]

    await eventually(lambda: left() == [], within=10)
