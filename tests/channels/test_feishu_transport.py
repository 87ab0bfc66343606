"""The Feishu channel's transports against the local platform: what each Open API answer
means for the outbox, and the long connection's thread, which never outlives its stop."""

from __future__ import annotations

import threading

import pytest

from hub.channels.feishu import FeishuChannel
from hub.channels.feishu.api import FeishuApi, FeishuError
from hub.channels.feishu.connection import LongConnection
from hub.core.notify.outbox import DeliveryRefused, RetryLater
from hub.core.store.models import Interaction
from tests.channels.conftest import eventually, feishu_settings
from tests.channels.feishu_peer import FeishuPeer

CARD = {"schema": "2.0", "body": {"elements": []}}


def api_of(feishu: FeishuPeer) -> FeishuApi:
    return FeishuApi(feishu.app_id, feishu.app_secret, feishu.url)


async def test_each_refusal_means_what_the_outbox_should_do(feishu: FeishuPeer) -> None:
    api = api_of(feishu)
    sent = await api.send_card("oc_ada", CARD, uuid="card-1")

    feishu.refuse_next(1, status=429, code=99991400, msg="frequency limit", reset_s=7)
    with pytest.raises(RetryLater) as limited:
        await api.send_card("oc_ada", CARD, uuid="card-2")
    assert limited.value.after_s == 7  # as long as the gateway says
    feishu.refuse_next(1, status=400, code=230020, msg="chat frequency limit")
    with pytest.raises(RetryLater) as per_chat:
        await api.patch_card(sent.message_id, CARD)
    assert per_chat.value.after_s == 5  # no reset given: a few seconds
    feishu.refuse_next(1, status=400, code=230002, msg="Bot is not in the chat")
    with pytest.raises(DeliveryRefused):
        await api.send_card("oc_gone", CARD, uuid="card-3")
    feishu.refuse_next(1, status=400, code=230099, msg="something else")
    with pytest.raises(FeishuError):
        await api.send_card("oc_ada", CARD, uuid="card-4")

    # A send repeated with its uuid (its first answer lost) is one message.
    again = await api.send_card("oc_ada", CARD, uuid="card-1")
    assert again.message_id == sent.message_id

    # A tenant token Feishu stops taking is fetched anew, once, and the call goes through.
    feishu.tokens.clear()
    await api.patch_card(sent.message_id, CARD)
    assert feishu.calls.count("tenant_access_token") == 2


def long_connection_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "feishu-long-connection"]


async def test_the_long_connection_starts_and_stops_with_its_thread(feishu: FeishuPeer) -> None:
    from lark_oapi.event.dispatcher_handler import EventDispatcherHandler

    dispatcher = EventDispatcherHandler.builder("", feishu.verification_token).build()
    connection = LongConnection(feishu.app_id, feishu.app_secret, feishu.url, dispatcher)
    await connection.start()
    assert connection.connected and feishu.connected == 1
    assert len(long_connection_threads()) == 1
    # One per process: the SDK keeps its loop in a module global.
    second = LongConnection(feishu.app_id, feishu.app_secret, feishu.url, dispatcher)
    with pytest.raises(RuntimeError, match="already running"):
        await second.start()
    await connection.stop()
    assert long_connection_threads() == []
    await connection.stop()  # twice is fine

    # The platform away at start: start fails, and leaves no thread behind.
    await feishu.stop()
    with pytest.raises(OSError):  # the endpoint call, refused
        await connection.start()
    assert long_connection_threads() == []
    await feishu.start()
    await connection.start()  # and it starts once the platform is back
    assert connection.connected
    await connection.stop()
    assert long_connection_threads() == []


async def test_a_long_connection_the_sdk_gave_up_on_is_started_again(  # type: ignore[no-untyped-def]
    make_hub, feishu: FeishuPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(FeishuChannel, "restart_after_s", 1.0)
    monkeypatch.setattr(FeishuChannel, "watch_every_s", 0.1)
    async with make_hub(**feishu_settings(feishu)) as hub:
        await hub.link_feishu(hub.owner, feishu, "ou_ada")
        # Feishu closes the connection and refuses the app's next ones: lark-oapi's
        # reconnect loop ends there, for good.
        feishu.refuse_endpoint = True
        await feishu.drop_connections()
        await eventually(lambda: feishu.calls.count("ws endpoint") >= 3)  # the hub kept asking
        assert feishu.connected == 0
        feishu.refuse_endpoint = False
        await eventually(lambda: feishu.connected == 1)
        interaction_id = await hub.ask(title="Deploy?")
        card = await eventually(
            lambda: next((m for m in feishu.chat("oc_ada") if "Deploy?" in m.text), None)
        )
        answer = await feishu.press("ou_ada", card, "Approve")
        assert answer["toast"]["content"].startswith("Thank you")
        assert (await Interaction.get(id=interaction_id)).responded_via == "feishu"
