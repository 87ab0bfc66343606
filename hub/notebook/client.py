"""A person's client of the hub for notebooks: the JSON API with a personal API token.

``Hub`` needs only the standard library (HTTP through ``urllib`` on a worker thread, so a
cell's event loop never blocks) and the SDK, so it runs in a notebook on a machine without
the server's dependencies. Answers it sends are recorded ``via: notebook``.

It is also how a notebook becomes an agent without leaving the notebook: ``register_agent``
creates a pairing code, connects an SDK ``Agent`` with it and confirms its name;
``assign`` gives that agent a task and returns the SDK's ``Task`` for it.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from hub.sdk import Agent, AuthenticationFailed, Task
from hub.sdk.display import InteractionInfo, TaskInfo
from hub.sdk.state import normalise_hub_url

if TYPE_CHECKING:
    from hub.notebook.inbox import Inbox

SURFACE = "notebook"
# A decision taken elsewhere first, or a card no longer open: the card shows the outcome.
_DECIDED_STATUSES = frozenset({409, 410})


class HubApiError(Exception):
    """The hub answered with an error: ``status``, its stable ``code``, a ``hint``."""

    def __init__(self, status: int, code: str, message: str, hint: str = "", details: Any = None):
        super().__init__(f"[{code}] {message}" + (f" (next: {hint})" if hint else ""))
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details if isinstance(details, dict) else {}


class Hub:
    """One person (their token) in one workspace of one hub."""

    def __init__(self, url: str, token: str, workspace_id: str, *, timeout_s: float = 30.0):
        self.url = normalise_hub_url(url)
        self.token = token
        self.workspace_id = workspace_id
        self.timeout_s = timeout_s
        self._assigned: dict[str, asyncio.Future[Task]] = {}
        self._listening: set[int] = set()

    @classmethod
    async def connect(cls, url: str, *, token: str, workspace: str | None = None) -> Hub:
        """Check the token and pick the workspace (the first one, unless named)."""
        probe = cls(url, token, workspace or "")
        found = (await probe.request("GET", "/workspaces"))["workspaces"]
        if workspace is None:
            if not found:
                raise HubApiError(404, "no_workspace", "This account belongs to no workspace.")
            workspace = str(found[0]["id"])
        elif workspace not in {w["id"] for w in found}:
            raise HubApiError(404, "workspace_not_found", f"No workspace {workspace} for you.")
        return cls(url, token, workspace)

    def card_page(self, interaction_id: str) -> str:
        """The card's page on the hub's web UI (where an editable action is edited)."""
        workspace, card = quote(self.workspace_id, safe=""), quote(interaction_id, safe="")
        return f"{self.url}/w/{workspace}/interactions/{card}"

    def __repr__(self) -> str:
        return f"Hub({self.url!r}, workspace={self.workspace_id!r})"

    # --- HTTP --------------------------------------------------------------------------

    async def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """``method`` ``/api/v1{path}``; the decoded JSON, or ``HubApiError``."""
        return await asyncio.to_thread(self._request, method, path, body)

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/api/v1{path}",
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json",
                **({"Content-Type": "application/json"} if data is not None else {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as failure:
            raw = failure.read()
            try:
                error = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                error = {"code": "http_error", "message": raw.decode(errors="replace")[:500]}
            raise HubApiError(
                failure.code,
                str(error.get("code") or "http_error"),
                str(error.get("message") or ""),
                str(error.get("hint") or ""),
                error.get("details"),
            ) from None

    def _ws(self, path: str) -> str:
        return f"/workspaces/{quote(self.workspace_id, safe='')}{path}"

    # --- reading -----------------------------------------------------------------------

    async def inbox(self) -> dict[str, Any]:
        """Waiting for me / needs attention / recently done, as the API returns it."""
        result: dict[str, Any] = await self.request("GET", self._ws("/inbox"))
        return result

    async def interaction(self, interaction_id: str) -> InteractionInfo:
        return InteractionInfo(
            await self.request("GET", self._ws(f"/interactions/{interaction_id}"))
        )

    async def task(self, task_id: str) -> TaskInfo:
        """The task with its interactions and artifacts; shows itself in a notebook."""
        return TaskInfo(await self.request("GET", self._ws(f"/tasks/{task_id}")))

    async def tasks(self, status: str | None = None) -> list[TaskInfo]:
        """Every task (of ``status``), newest first: the list's pages followed to its end."""
        found: list[TaskInfo] = []
        cursor: str | None = None
        while True:
            query = {k: v for k, v in (("status", status), ("cursor", cursor)) if v}
            page = await self.request("GET", self._ws(f"/tasks?{urlencode(query)}"))
            found.extend(TaskInfo(t) for t in page["tasks"])
            cursor = page.get("nextCursor")
            if not cursor:
                return found

    async def me(self) -> dict[str, Any]:
        """The person this token belongs to: ``{userId, email, displayName}``."""
        found: dict[str, Any] = await self.request("GET", "/me")
        return found

    async def log_position(self) -> tuple[str, int]:
        """The workspace log's ``epoch`` and last sequence right now."""
        page = await self.request("GET", self._ws("/events?after=0&limit=1"))
        return str(page["epoch"]), int(page["lastSequence"])

    # --- acting ------------------------------------------------------------------------

    async def respond(self, interaction_id: str, answer: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a card from this notebook; the resolved interaction. ``HubApiError`` 409
        (``already_decided``, details say who, via what, when) if someone answered first."""
        body = {**answer, "via": SURFACE}
        resolved: dict[str, Any] = await self.request(
            "POST", self._ws(f"/interactions/{interaction_id}/respond"), body
        )
        return resolved

    async def decide(self, task_id: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Answer several cards of a task together from this notebook: ``items`` are
        ``{interactionId, response}``. ``{batchId, taskId, items}``, one outcome per item
        (``decided``, ``already_decided``, ``closed``, ``refused``); ``HubApiError`` 422
        ``invalid_batch`` when an item cannot be decided (nothing was)."""
        body = {"items": items, "via": SURFACE}
        result: dict[str, Any] = await self.request(
            "POST", self._ws(f"/tasks/{quote(task_id, safe='')}/decisions"), body
        )
        return result

    def responder(self, interaction_id: str) -> Any:
        """``respond`` for one card, as a ``CardWidget`` calls it (refusals explained)."""
        from hub.sdk.notebook.cards import AnswerRefused

        async def respond(answer: dict[str, Any]) -> Mapping[str, Any]:
            try:
                return await self.respond(interaction_id, answer)
            except HubApiError as error:
                decided = None
                if error.status in _DECIDED_STATUSES:
                    decided = error.details.get("interaction") or dict(
                        await self.interaction(interaction_id)
                    )
                said = f"{error.message} {error.hint}".strip()
                raise AnswerRefused(said, code=error.code, decided=decided) from error

        return respond

    async def create_task(
        self, title: str, agent_id: str, *, description: str = "", conversation_id: str = ""
    ) -> TaskInfo:
        body: dict[str, Any] = {"title": title, "description": description}
        body["targetAgentId"] = agent_id
        if conversation_id:
            body["conversationId"] = conversation_id
        return TaskInfo(await self.request("POST", self._ws("/tasks"), body))

    async def cancel_task(self, task_id: str, reason: str = "") -> TaskInfo:
        return TaskInfo(
            await self.request("POST", self._ws(f"/tasks/{task_id}/cancel"), {"reason": reason})
        )

    # --- a notebook that is also an agent ------------------------------------------------

    async def register_agent(self, name: str, **options: Any) -> Agent:
        """An SDK ``Agent`` for this workspace, paired and confirmed under ``name``.

        ``options`` go to ``Agent`` (``state_dir``, ``profile``, ...). A credential kept from
        an earlier run under the same profile is used instead of pairing again, unless the
        hub refuses it (the agent was revoked): then the notebook pairs as a new agent.
        """
        agent = await self._start_with_kept_credential(name, options)
        if agent is None:
            created = await self.request("POST", self._ws("/pairing-codes"), {})
            agent = Agent(self.url, name=name, pairing_code=created["code"], **options)
            await agent.start()
        if agent.workspace_id != self.workspace_id:
            await agent.close()
            raise HubApiError(409, "workspace_mismatch", "That agent belongs to another workspace.")
        assert agent.agent_id is not None  # started: paired, so it has its id
        mine = await self.request("GET", self._ws(f"/agents/{quote(agent.agent_id, safe='')}"))
        if mine.get("status") == "pending":
            await self.request(
                "POST", self._ws(f"/agents/{agent.agent_id}/confirm"), {"name": name}
            )
        return agent

    async def _start_with_kept_credential(self, name: str, options: dict[str, Any]) -> Agent | None:
        """The agent connected with the credential of an earlier run; None on a first run
        or when the hub refuses it (the agent was revoked): then it pairs afresh."""
        agent = Agent(self.url, name=name, **options)
        if not agent.state.credential:
            return None
        try:
            return await agent.start()
        except AuthenticationFailed:
            return None

    async def assign(self, agent: Agent, title: str, *, description: str = "") -> Task:
        """Give ``agent`` (running in this process) a task and return its SDK ``Task`` once
        the agent received it: report on it, ask a person, finish it."""
        self._listen(agent)
        assert agent.agent_id is not None
        created = await self.create_task(title, agent.agent_id, description=description)
        arrival = self._assigned.setdefault(
            created["id"], asyncio.get_running_loop().create_future()
        )
        try:
            return await asyncio.wait_for(asyncio.shield(arrival), self.timeout_s)
        finally:
            self._assigned.pop(created["id"], None)

    def _listen(self, agent: Agent) -> None:
        if id(agent) in self._listening:
            return
        self._listening.add(id(agent))

        @agent.on("task.assigned")
        async def _arrived(downlink: Any) -> None:
            data = downlink.payload.get("task") or {}
            task_id = str(data.get("id") or "")
            arrival = self._assigned.setdefault(task_id, asyncio.get_running_loop().create_future())
            if not arrival.done():
                arrival.set_result(agent.task(data))

    # --- the inbox ---------------------------------------------------------------------

    async def open_inbox(self) -> Inbox:
        """The live notebook inbox for this workspace (``display`` it)."""
        # Imported here: the widgets it needs are an extra that a script may not have.
        from hub.notebook.inbox import Inbox

        return await Inbox.open(self)


__all__ = ["SURFACE", "Hub", "HubApiError"]
