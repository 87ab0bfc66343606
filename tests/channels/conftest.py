"""A hub with its channels running in this process, against real local peers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from quart import Quart
from quart.typing import TestClientProtocol

from hub.channels.runtime import ChannelRuntime, runtime_of
from hub.channels.slack import SlackChannel
from hub.channels.telegram import TelegramChannel
from hub.config import load_settings
from hub.core.ids import new_id
from hub.core.log.events import append_event
from hub.core.notify.channel_accounts import create_link_token
from hub.core.notify.outbox import RetryPolicy
from hub.core.people.accounts import create_api_token, create_user, workspaces_of
from hub.core.store.models import Agent, AgentStatus, User, Workspace
from hub.host.app import create_app
from hub.testing import eventually
from tests.channels.peers import BotApiPeer
from tests.channels.slack_peer import APP_TOKEN, BOT_TOKEN, SlackPeer

if TYPE_CHECKING:
    from tests.channels.feishu_peer import FeishuPeer

FAST_RETRY = RetryPolicy(first_delay_s=0.05, max_delay_s=0.4, jitter=0.0)
PUBLIC_URL = "http://hub.test"


@dataclass
class Person:
    user: User
    workspace: Workspace
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Hub:
    app: Quart
    client: TestClientProtocol
    runtime: ChannelRuntime
    agent: Agent
    owner: Person

    async def person(self, name: str) -> Person:
        user, workspace = await create_user(f"{name}@example.com", "correct horse", name)
        _, token = await create_api_token(user, "test")
        return Person(user, workspace, token)

    async def ask(self, person: Person | None = None, **card: Any) -> str:
        """The agent takes a new task in ``person``'s workspace and asks them ``card``."""
        person = person or self.owner
        agent = self.agent
        if agent.workspace_id != person.workspace.id:
            agent = await make_agent(person.workspace)
        task_id, interaction_id = new_id("task"), new_id("interaction")
        ws = person.workspace.id
        await append_event(
            ws,
            "task.created",
            {"taskId": task_id, "title": "Ship the release", "targetAgentId": agent.id},
            actor=f"user:{person.user.id}",
        )
        await append_event(ws, "task.accepted", {"taskId": task_id}, actor=f"agent:{agent.id}")
        card = {"id": interaction_id, "type": "approval", "title": "Run the migration?", **card}
        await append_event(
            ws,
            "interaction.requested",
            {"interaction": card},
            actor=f"agent:{agent.id}",
            task_id=task_id,
        )
        return interaction_id

    async def link_feishu(self, person: Person, feishu: FeishuPeer, open_id: str) -> None:
        """Link ``person``'s Feishu account ``open_id`` (its chat with the bot: ``oc_`` +
        the id) by sending the bot a link code, as Settings → Feishu asks."""
        token, _ = await create_link_token(person.user.id, "feishu")
        await feishu.send_text(open_id, feishu_chat(open_id), token)
        await eventually(lambda: any("Linked" in m.text for m in feishu.chat(feishu_chat(open_id))))

    async def link_telegram(self, person: Person, bot_api: BotApiPeer, telegram_id: int) -> None:
        token, _ = await create_link_token(person.user.id, "telegram")
        bot_api.send_text(telegram_id, f"/start {token}")
        await eventually(
            lambda: any("Linked" in m.text or "已关联" in m.text for m in bot_api.chat(telegram_id))
        )

    async def link_slack(self, person: Person, slack: SlackPeer, user: str) -> str:
        """Link ``person``'s Slack account ``user``; returns their conversation with the app."""
        channel = slack.person(user, person.user.display_name)
        token, _ = await create_link_token(person.user.id, "slack")
        await slack.send_dm(user, f"here is my code: {token}")
        await eventually(lambda: any("Linked" in m.text for m in slack.conversation(channel)))
        return channel


def slack_settings(slack: SlackPeer, **more: Any) -> dict[str, Any]:
    """Settings that reach ``slack`` over Socket Mode."""
    return {
        "slack_bot_token": BOT_TOKEN,
        "slack_app_token": APP_TOKEN,
        "slack_api_url": slack.api_url,
        **more,
    }


async def make_agent(workspace: Workspace) -> Agent:
    return await Agent.create(
        id=new_id("agent"),
        workspace=workspace,
        name="deploy-bot",
        status=AgentStatus.ONLINE,
        runtime="test",
    )


def feishu_chat(open_id: str) -> str:
    """The one-to-one chat of the bot with ``open_id``, in the tests' Feishu."""
    return "oc_" + open_id.removeprefix("ou_")


def feishu_settings(feishu: FeishuPeer) -> dict[str, Any]:
    """Settings that run the Feishu channel against the local ``feishu`` platform."""
    return {
        "feishu_app_id": feishu.app_id,
        "feishu_app_secret": feishu.app_secret,
        "feishu_verification_token": feishu.verification_token,
        "feishu_encrypt_key": feishu.encrypt_key,
        "feishu_api_url": feishu.url,
    }


@pytest.fixture
def feishu(feishu: FeishuPeer, monkeypatch: pytest.MonkeyPatch) -> FeishuPeer:
    """The local Feishu platform (``tests/conftest.py``), whose presses the hub may answer
    late: a loaded test machine can take longer than Feishu's three seconds, and the tests
    read each press's own answer."""
    from hub.channels.feishu.inbound import Inbound

    monkeypatch.setattr(Inbound, "answer_within_s", 30.0)
    return feishu


def peer_settings(smtp: Any, bot_api: BotApiPeer, **more: Any) -> dict[str, Any]:
    """Settings that send mail to ``smtp`` and Telegram through ``bot_api``."""
    return {
        "smtp_url": smtp.url,
        "telegram_bot_token": bot_api.token,
        "telegram_api_url": bot_api.url,
        **more,
    }


def hub_settings(database_url: str, data_dir: Path, **overrides: Any) -> Any:
    return load_settings(
        database_url=database_url,
        data_dir=data_dir,
        secret_key="channel-tests-secret-key-" + "x" * 32,
        public_url=PUBLIC_URL,
        **overrides,
    )


@pytest.fixture
def make_hub(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Any]:
    monkeypatch.setattr(TelegramChannel, "poll_timeout_s", 1)
    monkeypatch.setattr(SlackChannel, "ping_interval_s", 0.5)

    def build(**overrides: Any) -> Any:
        return _running_hub(hub_settings(database_url, tmp_path / "data", **overrides))

    return build


class _running_hub:
    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self._context: Any = None

    async def __aenter__(self) -> Hub:
        app = create_app(self.settings)
        runtime = runtime_of(app)
        runtime.worker.retry = FAST_RETRY
        runtime.worker.idle_poll_s = 0.2
        self._context = app.test_app()
        test_app = await self._context.__aenter__()
        existing = await User.filter(email="owner@example.com").first()
        if existing is None:  # a second hub on the same database finds the first one's owner
            user, workspace = await create_user("owner@example.com", "correct horse", "Ada")
            agent = await make_agent(workspace)
        else:
            user, [workspace] = existing, await workspaces_of(existing)
            agent = await Agent.get(workspace_id=workspace.id)
        _, token = await create_api_token(user, "test")
        return Hub(app, test_app.test_client(), runtime, agent, Person(user, workspace, token))

    async def __aexit__(self, *exc: object) -> None:
        await self._context.__aexit__(*exc)
