"""Feishu's settings: a missing or wrong one stops `lineup serve` in one line that names it.

Missing or malformed settings are named before anything starts; an App ID or App Secret
that Feishu refuses is named once the local Feishu platform has said so. Each case is a
real `lineup serve` process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hub.config import load_settings
from hub.core.errors import ConfigurationError
from tests.channels.feishu_peer import FeishuPeer
from tests.e2e.test_serve_startup_failures import one_line, serve

pytestmark = pytest.mark.same_on_every_database


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"LINEUP_FEISHU_APP_SECRET": ""}, "LINEUP_FEISHU_APP_SECRET"),
        ({"LINEUP_FEISHU_VERIFICATION_TOKEN": ""}, "LINEUP_FEISHU_VERIFICATION_TOKEN"),
        ({"LINEUP_FEISHU_APP_ID": "a1b2c3"}, "LINEUP_FEISHU_APP_ID"),
        ({"LINEUP_FEISHU_APP_ID": ""}, "LINEUP_FEISHU_APP_SECRET"),
        ({"LINEUP_FEISHU_API_URL": "open.feishu.cn"}, "LINEUP_FEISHU_API_URL"),
        ({"LINEUP_FEISHU_API_URL": "https://open.feishu.cn/open-apis"}, "LINEUP_FEISHU_API_URL"),
    ],
)
def test_a_missing_or_malformed_setting_is_named(changes: dict[str, str], named: str) -> None:
    env = {
        "feishu_app_id": "cli_a1b2c3",
        "feishu_app_secret": "secret",
        "feishu_verification_token": "token",
        **{key.removeprefix("LINEUP_").lower(): value for key, value in changes.items()},
    }
    with pytest.raises(ConfigurationError) as refused:
        load_settings(hub_side=False, **env)
    assert named in refused.value.message


def test_lark_is_one_setting_away() -> None:
    settings = load_settings(
        hub_side=False,
        feishu_app_id="cli_a1b2c3",
        feishu_app_secret="secret",
        feishu_verification_token="token",
        feishu_api_url="https://open.larksuite.com/",
    )
    assert settings.feishu_api_url == "https://open.larksuite.com"
    assert load_settings(hub_side=False).feishu_api_url == "https://open.feishu.cn"


async def test_serve_names_a_missing_secret(tmp_path: Path, feishu: FeishuPeer) -> None:
    env = feishu.hub_env(LINEUP_FEISHU_APP_SECRET="")
    result = await asyncio.to_thread(serve, tmp_path, **env)
    assert result.returncode == 2
    assert "LINEUP_FEISHU_APP_SECRET" in one_line(result, "configuration_error")


@pytest.mark.parametrize(
    ("setting", "wrong"),
    [("LINEUP_FEISHU_APP_SECRET", "not-the-secret"), ("LINEUP_FEISHU_APP_ID", "cli_unknown")],
)
async def test_serve_names_credentials_feishu_refuses(
    tmp_path: Path, feishu: FeishuPeer, setting: str, wrong: str
) -> None:
    result = await asyncio.to_thread(serve, tmp_path, **feishu.hub_env(**{setting: wrong}))
    assert result.returncode == 2
    line = one_line(result, "configuration_error")
    assert setting in line and "refused" in line and wrong not in line
    assert feishu.calls == ["tenant_access_token"]  # asked once, before anything else
