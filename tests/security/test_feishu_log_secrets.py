"""No Feishu secret reaches the hub's log: a run at DEBUG with the Feishu channel (the app's
secret, verification token and encrypt key; the tenant tokens; the long connection's
address, which authenticates it; a link code) against the local Feishu platform, then every
one of those values is searched for in everything the hub printed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hub.core.notify.channel_accounts import create_link_token
from tests.channels.conftest import feishu_chat
from tests.channels.feishu_peer import ENCRYPT_KEY, FeishuPeer
from tests.sdk.live import live_hub

pytestmark = pytest.mark.timeout(120)


async def test_a_feishu_run_logs_no_secret(db: str, tmp_path: Path) -> None:
    feishu = FeishuPeer(encrypt_key=ENCRYPT_KEY)
    await feishu.start()
    try:
        env = feishu.hub_env(LINEUP_LOG_LEVEL="DEBUG")
        async with live_hub(db, tmp_path / "hub", **env) as hub:
            for _ in range(500):
                if feishu.connected:
                    break
                await asyncio.sleep(0.02)
            token, _ = await create_link_token(hub.user_id, "feishu")
            await feishu.send_text("ou_ada", feishu_chat("ou_ada"), token)  # by the connection
            forged = feishu.event("card.action.trigger", {}, token="forged")
            refused = await feishu.post_callback(hub.url, forged)  # and by HTTP
            assert refused.status_code == 401
            log = hub.process.log()
    finally:
        await feishu.stop()
    assert "feishu started" in log, log[-2000:]
    secrets = {
        "app secret": feishu.app_secret,
        "verification token": feishu.verification_token,
        "encrypt key": feishu.encrypt_key,
        "link code": token,
        "long connection access key": feishu.access_key,
        "long connection ticket": feishu.ticket,
        **{f"tenant token {n}": t for n, t in enumerate(feishu.tokens)},
    }
    leaked = {name for name, value in secrets.items() if value in log}
    assert not leaked, f"in the log in clear: {sorted(leaked)}"
