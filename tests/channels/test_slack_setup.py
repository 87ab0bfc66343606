"""Setting Slack up: a missing or wrong setting stops the hub at start in one line naming
it; a token Slack refuses is named in the log while the rest of the hub serves."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hub.config import load_settings
from hub.core.errors import ConfigurationError
from tests.channels.conftest import eventually, slack_settings
from tests.channels.slack_peer import APP_TOKEN, BOT_TOKEN, SIGNING_SECRET, SlackPeer

WRONG = [
    ({"slack_bot_token": "xoxp-a-user-token", "slack_app_token": APP_TOKEN},
     "LINEUP_SLACK_BOT_TOKEN: Value error, must be a bot token, starting with xoxb-"),
    ({"slack_bot_token": BOT_TOKEN, "slack_app_token": "xoxb-not-an-app-token"},
     "LINEUP_SLACK_APP_TOKEN: Value error, must be an app-level token, starting with xapp-"),
    ({"slack_bot_token": BOT_TOKEN, "slack_signing_secret": "hunter2"},
     "LINEUP_SLACK_SIGNING_SECRET: Value error, must be the app's signing secret"),
    ({"slack_bot_token": BOT_TOKEN, "slack_app_token": APP_TOKEN, "slack_api_url": "slack.com"},
     "LINEUP_SLACK_API_URL: Value error, must start with https://"),
    ({"slack_app_token": APP_TOKEN}, "LINEUP_SLACK_BOT_TOKEN is missing"),
    ({"slack_signing_secret": SIGNING_SECRET}, "LINEUP_SLACK_BOT_TOKEN is missing"),
    ({"slack_bot_token": BOT_TOKEN},
     "LINEUP_SLACK_APP_TOKEN (Socket Mode) or LINEUP_SLACK_SIGNING_SECRET"),
]  # fmt: skip


@pytest.mark.same_on_every_database
@pytest.mark.parametrize(("settings", "named"), WRONG)
def test_a_missing_or_wrong_slack_setting_is_named(
    settings: dict[str, str], named: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigurationError) as failure:
        load_settings(data_dir=tmp_path, **settings)
    assert named in failure.value.message


@pytest.mark.same_on_every_database
@pytest.mark.parametrize(
    "settings",
    [
        {"slack_bot_token": BOT_TOKEN, "slack_app_token": APP_TOKEN},
        {"slack_bot_token": BOT_TOKEN, "slack_signing_secret": SIGNING_SECRET},
        {},
    ],
)
def test_a_complete_slack_set_up_or_none_is_taken(settings: dict[str, str], tmp_path: Path) -> None:
    assert load_settings(data_dir=tmp_path, **settings).slack_bot_token == settings.get(
        "slack_bot_token", ""
    )


@pytest.mark.same_on_every_database
def test_the_hub_does_not_start_on_half_a_slack_set_up(tmp_path: Path) -> None:
    env = {**os.environ, "LINEUP_DATA_DIR": str(tmp_path), "LINEUP_SLACK_BOT_TOKEN": BOT_TOKEN}
    result = subprocess.run(
        [sys.executable, "-m", "hub.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()  # one line, whole in a service's log
    assert line.startswith("error [configuration_error]: Invalid settings: LINEUP_SLACK_APP_TOKEN")


async def test_a_token_slack_refuses_is_named_and_the_rest_serves(
    make_hub, slack: SlackPeer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="hub.channels.runtime")
    settings = slack_settings(slack, slack_bot_token="xoxb-revoked")
    async with make_hub(**settings) as hub:
        await eventually(
            lambda: "Slack refused LINEUP_SLACK_BOT_TOKEN (invalid_auth)" in caplog.text
        )
        healthy = await hub.client.get("/healthz")
        assert healthy.status_code == 200


@pytest.mark.parametrize(
    ("tokens", "named"),
    [
        ({"LINEUP_SLACK_BOT_TOKEN": "xoxb-revoked"}, "LINEUP_SLACK_BOT_TOKEN"),
        ({"LINEUP_SLACK_APP_TOKEN": "xapp-1-A1-revoked"}, "LINEUP_SLACK_APP_TOKEN"),
    ],
)
async def test_a_token_slack_refuses_stops_lineup_serve_in_one_line(
    database_url: str, tmp_path: Path, slack: SlackPeer, tokens: dict[str, str], named: str
) -> None:
    env = {
        **os.environ,
        "LINEUP_DATA_DIR": str(tmp_path),
        "LINEUP_DATABASE_URL": database_url,
        "LINEUP_PORT": "0",
        "LINEUP_SLACK_BOT_TOKEN": BOT_TOKEN,
        "LINEUP_SLACK_APP_TOKEN": APP_TOKEN,
        "LINEUP_SLACK_API_URL": slack.api_url,
        **tokens,
    }
    # Off the event loop: the Slack it asks is served by this loop.
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "hub.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error [slack_token_refused]: Slack refused {named} (invalid_auth).")
