"""A coding agent's hook events, as its reports and cards in the hub.

Each session of the CLI (its ``session_id``) is a task of the agent, named after the
project folder: the prompts are messages in the task's conversation, each tool that ran
is a progress line on its timeline, the last message of each turn is a message, and the
session's end ends the task. A tool call that needs a person is an approval card on the
task (``plugins.coding_agents.cards``), answered on any surface.

Every id is derived from the hook call (the client makes a ULID per call, and sends the
same one when it tries again) or from the session, so a call repeated after a lost
connection or a hub restart is the same report or waits on the same card, never a second
one. A session resumed after it ended (``claude --resume``, ``codex resume``: the same
``session_id``, a new ``SessionStart``) is a new task, the session's next one: its ids are
derived from the session and that count, which the task table tells. Nothing here is
stored but what the SDK agent keeps: which sessions' tasks exist is remembered only to
save a round trip, and asking again after a restart costs one.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from hub.coding_agents.events import GATE_EVENTS
from hub.core.approvals.coding_agent_rules import deny_rules
from hub.core.store.models import Task
from hub.core.task_states import TERMINAL_STATUSES
from hub.protocol.clock import utcnow
from hub.protocol.lap import WithdrawalReason
from hub.sdk import Agent, Downlink, HubRefused, Resolution
from plugins.coding_agents.cards import CLI_NAMES, ToolCall, answer_output, deny_output
from plugins.coding_agents.workspace_rules import denying_rule

logger = logging.getLogger(__name__)

GATES = frozenset(GATE_EVENTS)
MAX_TEXT = 20_000
# Said to a CLI whose session's task was cancelled in the hub: every call it asks about
# from then on is denied, which makes "cancel" the person's stop button for the agent.
CANCELLED_REASON = (
    "The person cancelled this session's task in the LineUp hub, so nothing more is "
    "allowed from the hub. Stop, and tell the person."
)


def derived_id(prefix: str, *parts: str) -> str:
    """An id of ours for one thing the client names (a session, a call and a step)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return f"{prefix}_{base64.b32encode(digest).decode()[:26]}"


@dataclass
class _Asking:
    session: str
    task_id: str
    call: ToolCall
    answer: asyncio.Future[Resolution | str] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class HookSessions:
    """One credential's coding-agent sessions, beside its loopback SDK agent."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._tasks: dict[str, str] = {}  # session id → task id, once known to exist
        self._asking: dict[str, _Asking] = {}  # card id → the call it asks about
        self._cancelled: set[str] = set()  # tasks a person cancelled (as far as seen here)
        agent.on("task.cancel_requested")(self._task_cancelled)

    async def handle(
        self, cli: str, hook: dict[str, Any], call_id: str, wait_s: float, *, ask: bool = True
    ) -> dict[str, Any] | None:
        """The hook's output for one event (None: nothing to say, the CLI goes on).

        A call (``PreToolUse``, ``PermissionRequest``) is checked against the workspace's
        deny rules, then, if ``ask``, asked about; without ``ask`` it is only checked (a
        call the CLI will ask about itself if it must, or run)."""
        event = str(hook.get("hook_event_name") or "")
        session = str(hook.get("session_id") or "")
        task_id = await self._task(cli, session, hook)
        if event in GATES:
            call = ToolCall.from_hook(cli, hook)
            refused = await self._refused_by_rule(task_id, call_id, call)
            if refused is not None or not ask:
                return refused
            return await self._gate(session, task_id, call, call_id, wait_s)
        if event == "Withdraw":
            await self._withdraw(derived_id("int", self._who(), call_id), "answered_in_terminal")
            return None
        if event == "UserPromptSubmit":
            # A new prompt: whatever the session was asking about was answered at its
            # terminal ("No" there interrupts the turn, and no Stop comes).
            await self._withdraw_session(session, "answered_in_terminal")
            await self._message(task_id, call_id, str(hook.get("prompt") or ""), "Prompt")
        elif event == "PostToolUse":
            call = ToolCall.from_hook(cli, hook)
            # A call that ran while its card still waited was allowed at the terminal.
            await self._withdraw_session(session, "answered_in_terminal", only=call)
            await self._report(task_id, call_id, "running", summary=_ran(call))
        elif event == "Stop":
            await self._withdraw_session(session, "answered_in_terminal")
            text = str(hook.get("last_assistant_message") or "")
            if text:
                await self._message(task_id, call_id, text, None)
        elif event == "SessionEnd":
            await self._withdraw_session(session, "no_longer_needed")
            reason = str(hook.get("reason") or "")
            summary = "The session ended" + (f" ({reason})." if reason else ".")
            await self._report(task_id, call_id, "succeeded", summary=summary)
            self._tasks.pop(session, None)
        return None

    # --- the session's task ---------------------------------------------------------------

    def _who(self) -> str:
        return self.agent.agent_id or ""

    async def _task(self, cli: str, session: str, hook: dict[str, Any]) -> str:
        starting = hook.get("hook_event_name") == "SessionStart"
        known = self._tasks.get(session)
        if known is not None and not starting:
            return known
        run, status = await self._latest_run(session)
        if status is not None and not (starting and status in TERMINAL_STATUSES):
            self._tasks[session] = self._task_id(session, run)
            return self._tasks[session]
        if status is not None:  # the session ended, and is resumed: its next task
            run += 1
        task_id = self._task_id(session, run)
        project = str(hook.get("cwd") or "")
        folder = os.path.basename(project.rstrip("/")) or project or "a project"
        name = CLI_NAMES.get(cli, cli)
        resumed = f" (resumed, part {run})" if run > 1 else ""
        await self.agent.send(
            "task.created",
            {
                "taskId": task_id,
                "title": f"{folder} — {name}"[:500],
                "description": f"{name} session {session} in {project}{resumed}."[:10_000],
            },
            envelope_id=derived_id("evt", self._who(), *self._run_of(session, run), "created"),
        )
        try:
            await self.agent.send(
                "task.accepted",
                {"taskId": task_id},
                task_id=task_id,
                envelope_id=derived_id("evt", self._who(), *self._run_of(session, run), "accepted"),
            )
        except HubRefused as refused:
            # Already running or ended (a session resumed after the hub forgot it): the
            # reports and cards that follow say what the hub thinks of that.
            logger.debug("task %s not accepted again: %s", task_id, refused.code)
        self._tasks[session] = task_id
        return task_id

    def _run_of(self, session: str, run: int) -> tuple[str, ...]:
        # The first run's ids are the session's alone, as they were before resumes counted.
        return (session,) if run == 1 else (session, f"run {run}")

    def _task_id(self, session: str, run: int) -> str:
        return derived_id("task", self._who(), *self._run_of(session, run))

    async def _latest_run(self, session: str) -> tuple[int, str | None]:
        """The session's last run that has a task, and that task's status (None: none yet)."""
        run, status = 1, None
        while run < 1000:
            found = await (
                Task.filter(id=self._task_id(session, run), workspace_id=self.agent.workspace_id)
                .first()
                .values_list("status", flat=True)
            )
            if found is None:
                return (run - 1, status) if status is not None else (1, None)
            run, status = run + 1, str(found)
        return run - 1, status

    async def _report(self, task_id: str, call_id: str, status: str, *, summary: str) -> None:
        try:
            await self.agent.send(
                "task.status_changed",
                {"taskId": task_id, "status": status, "summary": summary[:2000]},
                task_id=task_id,
                envelope_id=derived_id("evt", self._who(), call_id, "status"),
            )
        except HubRefused as refused:
            logger.info("coding agent report on %s refused: %s", task_id, refused.code)

    async def _message(self, task_id: str, call_id: str, text: str, label: str | None) -> None:
        text = text.strip()
        if not text:
            return
        content = f"{label}: {text}" if label else text
        try:
            await self.agent.send(
                "message.create",
                {
                    "messageId": derived_id("msg", self._who(), call_id),
                    "taskId": task_id,
                    "content": content[:MAX_TEXT],
                },
                task_id=task_id,
                envelope_id=derived_id("evt", self._who(), call_id, "message"),
            )
        except HubRefused as refused:
            logger.info("coding agent message on %s refused: %s", task_id, refused.code)

    # --- asking a person ------------------------------------------------------------------

    async def _refused_by_rule(
        self, task_id: str, call_id: str, call: ToolCall
    ) -> dict[str, Any] | None:
        """A denial when one of the workspace's rules names the call, noted on the task."""
        rule = denying_rule(await deny_rules(self.agent.workspace_id or ""), call)
        if rule is None:
            return None
        await self._report(
            task_id,
            call_id,
            "running",
            summary=f"Refused by the workspace rule {rule}: {_described(call)}",
        )
        return deny_output(
            call,
            f"Not allowed: the workspace's rule {rule} in the LineUp hub forbids this call, "
            "and no one can approve it. Do it another way, or tell the person.",
        )

    async def _gate(
        self,
        session: str,
        task_id: str,
        call: ToolCall,
        call_id: str,
        wait_s: float,
    ) -> dict[str, Any]:
        if task_id in self._cancelled:
            return deny_output(call, CANCELLED_REASON)
        card_id = derived_id("int", self._who(), call_id)
        expires_at = utcnow() + timedelta(seconds=wait_s)
        card = call.card(card_id, expires_at)
        asking = self._asking.get(card_id) or _Asking(session, task_id, call)
        self._asking[card_id] = asking
        started = time.monotonic()
        ask = asyncio.ensure_future(
            self.agent.request_interaction(
                card,
                task_id=task_id,
                envelope_id=derived_id("evt", self._who(), call_id, "ask"),
            )
        )
        either: set[asyncio.Future[Any]] = {ask, asking.answer}
        try:
            done, _ = await asyncio.wait(
                either, timeout=wait_s + 30, return_when=asyncio.FIRST_COMPLETED
            )
            if ask in done:
                answer: Resolution | str = ask.result()
            elif asking.answer in done:
                answer = asking.answer.result()
            else:
                answer = "The LineUp hub had no answer in time, so the call is denied."
        except HubRefused as refused:
            answer = f"The LineUp hub refused the request ({refused.code}): {refused.message}"
        finally:
            ask.cancel()
            if self._asking.get(card_id) is asking:
                del self._asking[card_id]
        if isinstance(answer, str):
            return deny_output(call, answer)
        return answer_output(call, answer, time.monotonic() - started, expires_at)

    async def _withdraw_session(
        self, session: str, reason: WithdrawalReason, *, only: ToolCall | None = None
    ) -> None:
        for card_id, asking in list(self._asking.items()):
            if asking.session != session:
                continue
            if only is not None and (
                asking.call.tool != only.tool or asking.call.tool_input != only.tool_input
            ):
                continue
            await self._withdraw(card_id, reason)

    async def _withdraw(self, card_id: str, reason: WithdrawalReason) -> None:
        """Close a card the CLI no longer waits on (answered at its own prompt)."""
        asking = self._asking.pop(card_id, None)
        if asking is not None and not asking.answer.done():
            asking.answer.set_result("The call was answered at the terminal.")
        try:
            await self.agent.withdraw_interaction(card_id, reason=reason)
        except HubRefused as refused:
            # Decided meanwhile (the person was first) or never asked: nothing to close.
            logger.debug("card %s not withdrawn: %s", card_id, refused.code)

    async def _task_cancelled(self, downlink: Downlink) -> None:
        task_id = str(downlink.payload.get("taskId") or "")
        self._cancelled.add(task_id)
        for asking in list(self._asking.values()):
            if asking.task_id == task_id and not asking.answer.done():
                asking.answer.set_result(CANCELLED_REASON)


def _ran(call: ToolCall) -> str:
    described = _described(call)
    if _command(call):
        return f"Ran {described}"
    return described if described != call.tool else f"Used {call.tool}"


def _described(call: ToolCall) -> str:
    """The call in a line: the tool, then its command or the file it works on."""
    command = _command(call)
    if command:
        return f"{call.tool}: {' '.join(command.split())}"[:1900]
    path = call.tool_input.get("file_path") or call.tool_input.get("notebook_path")
    if path:
        return f"{call.tool} {path}"[:1900]
    return call.tool


def _command(call: ToolCall) -> str:
    return str(call.tool_input.get("command") or call.tool_input.get("cmd") or "")
