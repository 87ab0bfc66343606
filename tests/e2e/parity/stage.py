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
* an agent connected through the hub's MCP server (``/mcp/``) with the official MCP client,
  which asks every card with the hub's asking tools, so what reaches the agent is checked as
  well as what every surface shows; the client declares elicitation, and the person at its
  terminal (``tests.e2e.parity.terminal``) is asked each card too;
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
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import BrowserContext, Page, async_playwright

from hub.core.ids import new_id
from hub.core.notify.channel_accounts import create_link_token
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Event, Membership, Role
from hub.sdk import Resolution
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
from tests.e2e.parity.terminal import TerminalPerson
from tests.mcp.conftest import McpAgent, http_agent, paired_credential
from tests.sdk.live import LiveHub

PASSWORD = "correct horse battery"
ADA_TELEGRAM = 4242
ADA_IN_SLACK = "U0ADA"
ADA_ON_FEISHU = "ou_ada"
WAIT_S = 30.0
TERMINAL_REASON = "answered_in_terminal"

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
    policy: dict[str, Any] | None = None  # who must answer (the MCP tools' policy)

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
    agent: McpAgent
    terminal: TerminalPerson  # the person at the agent's terminal
    # Decisions the agent's tool calls returned, by card: each must come once.
    frames: Counter[str] = field(default_factory=Counter)
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

    async def ask(self, kind: Kind, policy: dict[str, Any] | None = None) -> Asked:
        """The agent asks ``kind`` (with the MCP ``policy``) in a task of its own."""
        (asked,) = await self.ask_together([kind], policy)
        return asked

    async def ask_together(
        self, kinds: list[Kind], policy: dict[str, Any] | None = None
    ) -> list[Asked]:
        """The agent asks each of ``kinds`` in one task (several approvals: in one call of
        ``request_approvals``, a batch); each card gets a title no other card of the
        package has, so that every surface finds it by its title."""
        self._asked += 1
        task_title = f"Parity task {self._asked}"
        task, _ = await self.agent.call("start_task", title=task_title)
        titles = [f"{k.card['title']} #{self._asked}.{n}" for n, k in enumerate(kinds, 1)]
        extra = {"task_id": task["taskId"], "wait_seconds": WAIT_S * 4}
        if policy is not None:
            extra["policy"] = policy
        if len(kinds) == 1:
            tool, arguments = kinds[0].asked(titles[0])
            call = self._decided(tool, {**arguments, **extra}, single=True)
        else:
            items = [k.asked(t)[1] for k, t in zip(kinds, titles, strict=True)]
            approvals = [{"action": i["action"], "impact": i.get("impact", "")} for i in items]
            call = self._decided("request_approvals", {"items": approvals, **extra}, single=False)
        decided = asyncio.create_task(call)
        finishing = asyncio.create_task(self._finish_when_answered(task["taskId"], decided))
        self._finishing.add(finishing)
        finishing.add_done_callback(self._finishing.discard)
        ids = await asyncio.gather(*(self._waiting(title) for title in titles))
        return [
            Asked(
                card_id,
                title,
                task["taskId"],
                task_title,
                kind,
                asyncio.create_task(self._heard(decided, number)),
                policy,
            )
            for number, (card_id, title, kind) in enumerate(zip(ids, titles, kinds, strict=True))
        ]

    async def _decided(self, tool: str, arguments: dict[str, Any], single: bool) -> list[Any]:
        result, _ = await self.agent.call(tool, **arguments)
        decisions = [result] if single else result["items"]
        for decision in decisions:
            self.frames[decision["handle"]] += 1
        return decisions

    @staticmethod
    async def _heard(decided: asyncio.Task[list[Any]], number: int) -> Resolution:
        """What the tool call returned for its ``number``-th card, as the SDK reads it."""
        decision = (await asyncio.shield(decided))[number]
        assert decision["status"] == "decided", decision
        kept = ("optionId", "optionIds", "text", "comment", "votes", "action", "actionHash")
        response = {k: decision[k] for k in (*kept, "editedFrom") if k in decision}
        at = datetime.fromisoformat(decision["decidedAt"])
        return Resolution(decision["handle"], response, decision["decidedBy"], at, decision["via"])

    async def _finish_when_answered(self, task_id: str, decided: asyncio.Task[Any]) -> None:
        """The agent ends the task once every card of it is decided (a call that failed, or
        came back still pending, fails its test through ``Asked.heard``)."""
        try:
            decisions = await decided
        except Exception:
            return
        if all(d["status"] == "decided" for d in decisions):
            await self.agent.call("finish_task", task_id=task_id)

    async def _waiting(self, title: str) -> str:
        """The id of the card titled ``title``, once it waits for Ada."""

        async def look() -> str | None:
            inbox = await self.api("GET", "/inbox")
            return next(
                (
                    str(i["interaction"]["id"])
                    for i in inbox["waitingForMe"]
                    if i["interaction"]["card"]["title"] == title
                ),
                None,
            )

        found: str = await eventually(look, within=WAIT_S)
        return found

    async def card(self, card_id: str) -> dict[str, Any]:
        found: dict[str, Any] = await self.api("GET", f"/interactions/{card_id}")
        return found

    async def finished(self, task_id: str) -> None:
        """Wait until the agent's task ``task_id`` has ended (its cards all answered)."""

        async def ended() -> bool:
            return (await self.api("GET", f"/tasks/{task_id}"))["status"] == "succeeded"

        await eventually(ended, within=WAIT_S)

    async def decisions(self, card_id: str) -> int:
        """How many times the card was decided: its ``interaction.resolved`` events, and
        its withdrawals for an answer at the agent's terminal."""
        kinds = ("interaction.resolved", "interaction.withdrawn")
        events = await Event.filter(workspace_id=self.workspace_id, type__in=kinds)
        return sum(
            1
            for e in events
            if e.payload.get("interactionId") == card_id
            and (e.type == "interaction.resolved" or e.payload.get("reason") == TERMINAL_REASON)
        )


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
            **feishu.hub_env(),
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

        live = LiveHub(hub, workspace.id, ada.user_id, ada.http)
        credential = await paired_credential(live, root / "agent")
        terminal = TerminalPerson()
        agent = await stack.enter_async_context(
            _in_a_task_of_its_own(
                http_agent(live, credential, mode="legacy", elicitation_callback=terminal)
            )
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
            terminal,
        )
        yield stage


@contextlib.asynccontextmanager
async def _in_a_task_of_its_own(
    context: contextlib.AbstractAsyncContextManager[McpAgent],
) -> AsyncIterator[McpAgent]:
    """``context`` entered and left in one task: the MCP client's task groups must be, and
    a package's fixture is set up and torn down in different tasks."""
    entered: asyncio.Future[McpAgent] = asyncio.get_running_loop().create_future()
    leave = asyncio.Event()

    async def hold() -> None:
        try:
            async with context as value:
                entered.set_result(value)
                await leave.wait()
        except BaseException as error:
            if not entered.done():
                entered.set_exception(error)
            raise

    holder = asyncio.create_task(hold())
    try:
        yield await asyncio.wait_for(asyncio.shield(entered), WAIT_S * 2)
    finally:
        leave.set()
        await asyncio.wait_for(holder, WAIT_S)


async def _stopped(hub: HubProcess) -> None:
    await asyncio.to_thread(hub.stop)
    print(hub.log()[-6000:])  # shown by pytest only when a test fails
