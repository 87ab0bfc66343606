"""The connector: which tasks go to remote agents, and one runner per task in flight.

A reconcile pass finds the work from the database alone: queued tasks addressed to a
remote agent that have no ledger row yet (claimed by inserting one: the task id is the
row's key, so of two hub processes only one claims a task) and ledger rows not finished
(a restart resumes them). Each call is driven by one process at a time, the one holding
its lease (``hub.core.agents.remote_calls``): a pass claims calls that are free or whose owner
stopped renewing (it died), and a loop of its own renews this process's leases — apart from
the pass, which may wait on the network for a pinned agent's card — and stops the runners
whose lease another process took. The bus only wakes the pass early: a new task, a cancel
request or an answer to a remote's card starts or wakes the runner at once instead of at
the next pass. So does a remote's push to the webhook (``webhook``), passed on to the
driving process when another took it (``push_relay``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import Subquery

from hub.config import Settings
from hub.core.agents.remote import add_remote_agent, list_remote_agents, remote_agent_view
from hub.core.agents.remote_calls import (
    claim_call,
    claimable_calls,
    process_owner_name,
    release_calls,
    release_every_call,
    renew_leases,
)
from hub.core.errors import HubError
from hub.core.log.bus import PublishedEvent
from hub.core.store.database import sqlite_path
from hub.core.store.models import Task, Workspace
from hub.core.store.remote_models import RemoteAgent, RemoteCall
from hub.core.task_states import TaskStatus
from hub.net import check_outbound_url
from hub.protocol.clock import utcnow
from plugins.a2a_connector.agent_cards import fetch_card
from plugins.a2a_connector.breaker import Breaker
from plugins.a2a_connector.push_relay import PushListener, pass_on
from plugins.a2a_connector.runner import CallRunner

logger = logging.getLogger(__name__)

WAKING_EVENTS = frozenset({"task.created", "task.cancel_requested", "interaction.resolved"})
RECONCILE_INTERVAL_S = 5.0


class Connector:
    """Lifecycle: ``start`` once the database is open; ``stop`` before it closes. ``stop``
    cancels the runners mid-call: the ledger holds everything needed to resume."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.poll_interval_s = settings.a2a_poll_interval_s
        self.grace_period_s = settings.agent_grace_period_s
        self.breaker = Breaker(max_delay_s=max(settings.agent_grace_period_s / 4, 1.0))
        self.owner = process_owner_name()
        self.lease_s = settings.a2a_lease_s
        self.stopping = False
        self._runners: dict[str, tuple[CallRunner, asyncio.Task[None]]] = {}
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self._pins_done: set[tuple[str, str]] = set()
        self._push_listener = (
            PushListener(settings.resolved_database_url, self.wake_runner)
            if settings.is_postgres
            else None
        )
        self._listening: asyncio.Task[None] | None = None

    # --- adding agents (the JSON API's RemoteAgentAdder) ------------------------------------

    async def add_remote_agent(
        self, workspace_id: str, url: str, *, pinned: bool, secret: str | None, by: str
    ) -> dict[str, Any]:
        allow = self.settings.outbound_allow_private
        url = url.strip().rstrip("/")  # one agent per address, however it was typed
        await check_outbound_url(url, allow_private=allow)
        found = await fetch_card(url, allow_private=allow)
        agent = await add_remote_agent(
            workspace_id,
            found,
            by=by,
            pinned=pinned,
            secret=secret,
            secret_key=self.settings.secret_key,
        )
        await _learn_push_offer(agent.id, found.card)
        for listed, remote in await list_remote_agents(workspace_id):
            if listed.id == agent.id:
                return remote_agent_view(listed, remote)
        raise HubError("The remote agent vanished while it was added.")  # pragma: no cover

    async def _sync_pins(self) -> None:
        """Add pinned agents once each; an unreachable one is tried again next pass."""
        for pin in self.settings.a2a_pinned:
            workspaces = (
                [pin.workspace]
                if pin.workspace
                else [str(w) for w in await Workspace.all().values_list("id", flat=True)]
            )
            for workspace_id in workspaces:
                if (pin.url, workspace_id) in self._pins_done:
                    continue
                try:
                    await self.add_remote_agent(
                        workspace_id, pin.url, pinned=True, secret=pin.secret or None, by="system"
                    )
                except HubError as error:
                    logger.warning("pinned agent %s not added yet: %s", pin.url, error.message)
                    continue
                self._pins_done.add((pin.url, workspace_id))

    # --- running calls --------------------------------------------------------------------

    async def pushed(self, call_id: str) -> None:
        """The remote pushed a change of the call's task to the webhook (authentic, new):
        its runner reads the task now, in this process or, on PostgreSQL, in the one that
        drives the call (``push_relay``)."""
        if not self.wake_runner(call_id) and self._push_listener is not None:
            await pass_on(call_id)

    def wake_runner(self, call_id: str) -> bool:
        """Wake this process's runner of the call for a push; ``False`` if it has none."""
        running = self._runners.get(call_id)
        if running is None:
            return False
        running[0].pushed()
        return True

    def on_event(self, event: PublishedEvent) -> None:
        if event.type not in WAKING_EVENTS:
            return
        task_id = event.envelope.get("taskId") or event.envelope.get("payload", {}).get("taskId")
        running = self._runners.get(str(task_id)) if task_id else None
        if running is not None:
            running[0].wake.set()
        self._wake.set()

    async def reconcile(self) -> None:
        await self._sync_pins()
        remote_ids = RemoteAgent.all().values("id")
        claimed = RemoteCall.all().values("id")
        fresh = (
            await Task.filter(
                status=TaskStatus.QUEUED.value,
                target_agent_id__in=Subquery(remote_ids),
            )
            .exclude(id__in=Subquery(claimed))
            .limit(500)
        )
        now = utcnow()
        for task in fresh:
            with contextlib.suppress(IntegrityError):  # another hub process claimed it
                await RemoteCall.create(
                    id=task.id,
                    workspace_id=task.workspace_id,
                    agent_id=task.target_agent_id,
                    owner=self.owner,
                    lease_expires_at=now + timedelta(seconds=self.lease_s),
                    started_at=now,
                    updated_at=now,
                )
        for call_id in await claimable_calls(self.owner):
            if self.stopping or call_id in self._runners:
                continue
            if await claim_call(call_id, self.owner, self.lease_s):
                runner = CallRunner(self, call_id)
                job = asyncio.create_task(self._run(runner), name=f"a2a-{call_id}")
                self._runners[call_id] = (runner, job)

    async def _run(self, runner: CallRunner) -> None:
        try:
            await runner.run()
        except asyncio.CancelledError:
            raise
        except Exception:  # one broken call must not stop the others; the next pass retries
            logger.exception("remote call %s stopped on an error", runner.call_id)
            await asyncio.sleep(self.poll_interval_s)
        finally:
            self._runners.pop(runner.call_id, None)
            self._wake.set()

    async def renew(self) -> None:
        held = await renew_leases(list(self._runners), self.owner, self.lease_s)
        for call_id, (_, job) in list(self._runners.items()):
            if call_id not in held:  # this process stalled past its lease; another drives it
                logger.warning("remote call %s is driven by another hub process now", call_id)
                job.cancel()

    async def _loop_forever(self) -> None:
        if sqlite_path(self.settings.resolved_database_url) is not None:
            # One process per embedded database: a restart after a crash resumes its calls
            # at once instead of waiting out the dead process's leases.
            try:
                await release_every_call()
            except Exception:  # then the leases run out as they would on PostgreSQL
                logger.warning("could not free the remote calls of an earlier run", exc_info=True)
        while not self.stopping:
            try:
                await self.reconcile()
            except Exception:  # a database hiccup must not end the connector for good
                logger.exception("a2a reconcile failed; retrying")
            # A call whose owner died is claimed within a lease and a pass of its end.
            pause = min(RECONCILE_INTERVAL_S, self.lease_s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), pause)
            self._wake.clear()

    async def _renew_forever(self) -> None:
        while not self.stopping:
            try:
                await self.renew()
            except Exception:  # the next try may still come before the leases end
                logger.exception("a2a lease renewal failed; retrying")
            await asyncio.sleep(self.lease_s / 3)

    def start(self) -> None:
        self.stopping = False
        if self._loop is None:
            self._loop = asyncio.create_task(self._loop_forever(), name="a2a-connector")
            self._renewer = asyncio.create_task(self._renew_forever(), name="a2a-leases")
        if self._push_listener is not None and self._listening is None:
            self._listening = asyncio.create_task(self._push_listener.run(), name="a2a-pushes")

    async def stop(self) -> None:
        self.stopping = True
        self._wake.set()
        jobs = [job for _, job in self._runners.values()]
        jobs.extend(job for job in (self._loop, self._renewer, self._listening) if job is not None)
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        self._loop = self._renewer = self._listening = None
        self._runners.clear()
        try:  # another hub process takes the calls over now rather than when leases end
            await release_calls(self.owner)
        except Exception:  # the database may be gone already; the leases then just run out
            logger.warning("could not release remote calls on stop", exc_info=True)


async def _learn_push_offer(agent_id: str, fetched: dict[str, Any]) -> None:
    """A card stored before the hub read ``pushNotifications`` learns it when the agent is
    added again; nothing else of a stored card changes (its endpoint stays what tasks in
    flight were sent to)."""
    remote = await RemoteAgent.get(id=agent_id)
    if "pushNotifications" not in remote.card and "pushNotifications" in fetched:
        remote.card = {**remote.card, "pushNotifications": fetched["pushNotifications"]}
        await remote.save(update_fields=["card"])


__all__ = ["Connector"]
