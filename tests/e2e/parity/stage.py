"""Everything the parity suite shares: one hub process with its real peers and one of each
person's surfaces, set up once (each costs seconds) and stopped whatever happened.

* the hub: ``lineup serve`` (``hub.testing.HubProcess``) on a database of its own, its
  public URL its own address, so every link in a mail or a message leads back to it;
* an SMTP server (aiosmtpd) the hub mails to, a Telegram Bot API server it long-polls
  (``tests.channels.peers``), a Slack it reaches over Socket Mode
  (``tests.channels.slack_peer``) and a Feishu platform it holds a long connection to
  (``tests.channels.feishu_peer``);
* headless Chromium, signed in as Ada;
* a Jupyter kernel running Ada's notebook inbox (``hub.notebook``);
* an SDK agent on the LAP socket that asks every card, so what reaches the agent is checked
  as well as what every surface shows;
* Ada (the workspace's owner, her Telegram, Slack and Feishu accounts linked) and Bo, a
  member, the second approver of a quorum.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import BrowserContext, Page, async_playwright

from hub.core.agents.pairing import create_pairing_code
from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event, Membership, Role
from hub.protocol.interactions import InteractionCard
from hub.sdk import Agent, Backoff, Resolution, Task
from hub.testing import HubProcess, TestDatabases, eventually, opened
from tests.channels.conftest import feishu_chat
from tests.channels.feishu_peer import FeishuPeer
from tests.channels.peers import BotApiPeer, SmtpPeer
from tests.channels.slack_peer import APP_TOKEN as SLACK_APP_TOKEN
from tests.channels.slack_peer import BOT_TOKEN as SLACK_BOT_TOKEN
from tests.channels.slack_peer import SlackPeer
from tests.e2e.browser.conftest import CHROMIUM, CHROMIUM_ARGS, WAIT_MS
from tests.e2e.parity.kernel import Kernel
from tests.e2e.parity.kinds import Kind

PASSWORD = "correct horse battery"
ADA_TELEGRAM = 4242
ADA_IN_SLACK = "U0ADA"
ADA_ON_FEISHU = "ou_ada"
WAIT_S = 30.0

OPEN_INBOX = """
import os
from hub.notebook import Hub
hub = await Hub.connect(os.environ["LINEUP_HUB"], token=os.environ["LINEUP_TOKEN"])
inbox = await hub.open_inbox()
print("inbox open")
"""


@dataclass
class Person:
    user_id: str
    email: str
    name: str
    token: str
    http: httpx.AsyncClient  # the JSON API with the person's token

    async def respond(self, workspace_id: str, card_id: str, answer: dict[str, Any]) -> Any:
        return await self.http.post(
            f"/api/v1/workspaces/{workspace_id}/interactions/{card_id}/respond", json=answer
        )


@dataclass
class Asked:
    """A card the agent asked and is waiting on."""

    id: str
    title: str
    task_id: str
    task_title: str
    kind: Kind
    waiting: asyncio.Task[Resolution]

    async def heard(self) -> Resolution:
        """What the agent was answered (once; a second answer would be a second frame)."""
        return await asyncio.wait_for(asyncio.shield(self.waiting), WAIT_S)


@dataclass
class Stage:
    hub: HubProcess
    workspace_id: str
    ada: Person
    bo: Person
    smtp: SmtpPeer
    bot_api: BotApiPeer
    slack: SlackPeer
    slack_channel: str  # Ada's conversation with the app
    feishu: FeishuPeer
    feishu_chat: str  # Ada's chat with the bot
    browser: BrowserContext
    page: Page
    kernel: Kernel
    agent: Agent
    # interaction.resolved frames the agent received, by card: each must come once.
    frames: Counter[str] = field(default_factory=Counter)
    _tasks: dict[str, asyncio.Future[Task]] = field(default_factory=dict)
    _done: dict[str, asyncio.Event] = field(default_factory=dict)
    _finishing: set[asyncio.Task[None]] = field(default_factory=set)
    _asked: int = 0

    @property
    def url(self) -> str:
        return self.hub.url

    def card_url(self, card_id: str) -> str:
        return f"{self.url}/w/{self.workspace_id}/interactions/{card_id}"

    def task_url(self, task_id: str) -> str:
        return f"{self.url}/w/{self.workspace_id}/tasks/{task_id}"

    async def api(self, method: str, path: str, body: Any = None) -> Any:
        response = await self.ada.http.request(
            method, f"/api/v1/workspaces/{self.workspace_id}{path}", json=body
        )
        assert response.status_code < 400, f"{method} {path}: {response.text}"
        return response.json()

    async def task(self, title: str) -> Task:
        """A new task for the agent, once the agent accepted it."""
        created = await self.api(
            "POST", "/tasks", {"title": title, "targetAgentId": self.agent.agent_id}
        )
        arrival = self._tasks.setdefault(created["id"], asyncio.get_running_loop().create_future())
        return await asyncio.wait_for(arrival, WAIT_S)

    async def _arrived(self, task: Task) -> None:
        """The agent's task handler: accept, and keep the task running until every card it
        asks is answered (a task that ends withdraws its open cards)."""
        await task.accept()
        done = self._done.setdefault(task.id, asyncio.Event())
        arrival = self._tasks.setdefault(task.id, asyncio.get_running_loop().create_future())
        if not arrival.done():
            arrival.set_result(task)
        await done.wait()

    async def _finish_when_answered(self, task_id: str, waiting: list[asyncio.Task[Any]]) -> None:
        await asyncio.gather(*waiting, return_exceptions=True)
        self._done.setdefault(task_id, asyncio.Event()).set()

    async def ask(self, kind: Kind, **changes: Any) -> Asked:
        """The agent asks ``kind`` (with ``changes``) in a task of its own."""
        (asked,) = await self.ask_together([kind], **changes)
        return asked

    async def ask_together(self, kinds: list[Kind], **changes: Any) -> list[Asked]:
        """The agent asks each of ``kinds`` at once, in one task; each card gets a title no
        other card of the module has, so that every surface finds it by its title."""
        self._asked += 1
        task_title = f"Parity task {self._asked}"
        task = await self.task(task_title)
        asked = []
        for number, kind in enumerate(kinds, 1):
            title = f"{kind.card['title']} #{self._asked}.{number}"
            card_id = new_id("interaction")
            card = InteractionCard.model_validate({**kind.titled(title), **changes, "id": card_id})
            waiting = asyncio.create_task(task.request_interaction(card))
            asked.append(Asked(card_id, title, task.id, task_title, kind, waiting))
        finishing = asyncio.create_task(
            self._finish_when_answered(task.id, [a.waiting for a in asked])
        )
        self._finishing.add(finishing)
        finishing.add_done_callback(self._finishing.discard)
        for card in asked:
            await eventually(lambda c=card: self._exists(c.id), within=WAIT_S)
        return asked

    async def _exists(self, card_id: str) -> bool:
        response = await self.ada.http.get(
            f"/api/v1/workspaces/{self.workspace_id}/interactions/{card_id}"
        )
        return response.status_code == 200

    async def card(self, card_id: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.api("GET", f"/interactions/{card_id}")
        return found

    async def finished(self, task_id: str) -> None:
        """Wait until the agent's task ``task_id`` has ended (its cards all answered)."""

        async def ended() -> bool:
            return (await self.api("GET", f"/tasks/{task_id}"))["status"] == "succeeded"

        await eventually(ended, within=WAIT_S)

    async def decisions(self, card_id: str) -> int:
        """How many times the card was decided: its ``interaction.resolved`` events."""
        events = await Event.filter(workspace_id=self.workspace_id, type="interaction.resolved")
        return sum(1 for e in events if e.payload.get("interactionId") == card_id)


@contextlib.asynccontextmanager
async def staged(databases: TestDatabases, root: Path) -> AsyncIterator[Stage]:
    """The stage on a fresh database; the slow parts (the hub, Chromium, the kernel) start
    side by side, and everything started is stopped, in reverse, whatever happened."""
    database_url = await databases.create()
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(databases.drop, database_url)
        smtp, bot_api = SmtpPeer(), BotApiPeer()
        smtp.start()
        stack.callback(smtp.stop)
        await bot_api.start()
        stack.push_async_callback(bot_api.stop)
        slack = SlackPeer()
        await slack.start()
        stack.push_async_callback(slack.stop)
        feishu = FeishuPeer()
        await feishu.start()
        stack.push_async_callback(feishu.stop)
        hub = HubProcess(
            database_url,
            root / "hub",
            LINEUP_SMTP_URL=smtp.url,
            LINEUP_TELEGRAM_BOT_TOKEN=bot_api.token,
            LINEUP_TELEGRAM_API_URL=bot_api.url,
            LINEUP_SLACK_BOT_TOKEN=SLACK_BOT_TOKEN,
            LINEUP_SLACK_APP_TOKEN=SLACK_APP_TOKEN,
            LINEUP_SLACK_API_URL=slack.api_url,
            LINEUP_FEISHU_APP_ID=feishu.app_id,
            LINEUP_FEISHU_APP_SECRET=feishu.app_secret,
            LINEUP_FEISHU_VERIFICATION_TOKEN=feishu.verification_token,
            LINEUP_FEISHU_ENCRYPT_KEY=feishu.encrypt_key,
            LINEUP_FEISHU_API_URL=feishu.url,
            LINEUP_NOTIFY_AFTER_S="0",
            PYTHONFAULTHANDLER="1",
        )
        hub.env["LINEUP_PUBLIC_URL"] = hub.url  # links in mails and messages lead back here
        await stack.enter_async_context(opened(database_url))
        ada_user, workspace = await create_user("ada@example.com", PASSWORD, "Ada")
        bo_user, _ = await create_user("bo@example.com", PASSWORD, "Bo")
        await Membership.create(
            id=new_id("membership"), workspace=workspace, user=bo_user, role=Role.MEMBER
        )
        people = []
        for user in (ada_user, bo_user):
            _, token = await create_api_token(user, "parity")
            http = httpx.AsyncClient(
                base_url=hub.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            )
            stack.push_async_callback(http.aclose)
            people.append(Person(user.id, user.email, user.display_name, token, http))
        ada, bo = people

        kernel = Kernel()
        stack.push_async_callback(kernel.stop)
        stack.push_async_callback(_stopped, hub)
        playwright = await stack.enter_async_context(async_playwright())
        # The hub starts off the event loop: it calls the Bot API this loop serves.
        _, chromium, _ = await asyncio.gather(
            asyncio.to_thread(hub.start),
            playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            ),
            kernel.start({**os.environ, "LINEUP_HUB": hub.url, "LINEUP_TOKEN": ada.token}),
        )
        stack.push_async_callback(chromium.close)

        link, _ = await create_link_token(ada.user_id, "telegram")
        bot_api.send_text(ADA_TELEGRAM, f"/start {link}")
        slack_channel = slack.person(ADA_IN_SLACK, "Ada")
        slack_code, _ = await create_link_token(ada.user_id, "slack")
        await slack.send_dm(ADA_IN_SLACK, slack_code)
        await eventually(lambda: feishu.connected > 0, WAIT_S)  # its long connection is up
        chat = feishu_chat(ADA_ON_FEISHU)
        feishu_code, _ = await create_link_token(ada.user_id, "feishu")
        await feishu.send_text(ADA_ON_FEISHU, chat, feishu_code)
        browser = await chromium.new_context(
            viewport={"width": 1280, "height": 900}, locale="en-GB"
        )
        stack.push_async_callback(browser.close)
        browser.set_default_timeout(WAIT_MS)
        signed_in = await browser.request.post(
            f"{hub.url}/api/v1/auth/login", data={"email": ada.email, "password": PASSWORD}
        )
        assert signed_in.ok, await signed_in.text()
        page = await browser.new_page()
        assert "inbox open" in await kernel.run(OPEN_INBOX)
        await eventually(
            lambda: any("Linked" in m.text for m in bot_api.chat(ADA_TELEGRAM)), WAIT_S
        )
        await eventually(
            lambda: any("Linked" in m.text for m in slack.conversation(slack_channel)), WAIT_S
        )
        await eventually(lambda: any("Linked" in m.text for m in feishu.chat(chat)), WAIT_S)

        code, _ = await create_pairing_code(
            workspace.id, secret_key=hub.env["LINEUP_SECRET_KEY"], ttl_s=600
        )
        agent = Agent(
            hub.url,
            state_dir=root / "agent",
            pairing_code=code,
            name="Deployer",
            backoff=Backoff(initial_s=0.05, maximum_s=0.5),
        )
        stage = Stage(
            hub,
            workspace.id,
            ada,
            bo,
            smtp,
            bot_api,
            slack,
            slack_channel,
            feishu,
            chat,
            browser,
            page,
            kernel,
            agent,
        )
        agent.on_task(stage._arrived)

        @agent.on("interaction.resolved")
        async def _heard(downlink: Any) -> None:
            stage.frames[str(downlink.payload["interactionId"])] += 1

        await stack.enter_async_context(agent)
        await stage.api("POST", f"/agents/{agent.agent_id}/confirm", {"name": "Deployer"})
        yield stage


async def _stopped(hub: HubProcess) -> None:
    await asyncio.to_thread(hub.stop)
    print(hub.log()[-6000:])  # shown by pytest only when a test fails
