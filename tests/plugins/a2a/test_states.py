"""The remote-state table, every value, in both protocol spellings."""

from __future__ import annotations

import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import TaskState

from hub.core.task_states import TaskStatus
from plugins.a2a_connector.states import HUB_STATUS, UNKNOWN, hub_status, state_name
from tests.plugins.a2a.conftest import Person
from tests.plugins.a2a.peers import Base, say, serve_remote
from tests.plugins.a2a.test_tasks import ended

EXPECTED = {
    "submitted": TaskStatus.RUNNING,
    "working": TaskStatus.RUNNING,
    "input-required": TaskStatus.WAITING_FOR_HUMAN,
    "auth-required": TaskStatus.WAITING_FOR_HUMAN,
    "completed": TaskStatus.SUCCEEDED,
    "failed": TaskStatus.FAILED,
    "rejected": TaskStatus.FAILED,
    "canceled": TaskStatus.CANCELLED,
}


def test_the_table_is_the_seeds() -> None:
    assert HUB_STATUS == EXPECTED


@pytest.mark.parametrize("name", TaskState.keys())
def test_every_v1_enum_value_maps_by_name_and_by_number(name: str) -> None:
    v03 = name.removeprefix("TASK_STATE_").lower().replace("_", "-")
    expected = EXPECTED.get(v03)  # TASK_STATE_UNSPECIFIED → unknown
    assert hub_status(name) == expected
    assert hub_status(TaskState.Value(name)) == expected
    assert state_name(name) == (v03 if expected else UNKNOWN)


@pytest.mark.parametrize("name", [*EXPECTED, "unknown"])
def test_every_v03_string_maps(name: str) -> None:
    assert hub_status(name) == EXPECTED.get(name)


@pytest.mark.parametrize(
    "garbage",
    ["unknown", "", "COMPLETED!", "<b>completed</b>", None, 7.5, 999, ["working"], {}, True],
)
def test_anything_else_is_unknown_and_moves_nothing(garbage: object) -> None:
    assert state_name(garbage) == UNKNOWN
    assert hub_status(garbage) is None


def test_the_british_spelling_is_cancelled_too() -> None:
    assert hub_status("cancelled") == TaskStatus.CANCELLED


# --- end to end: what a person sees for each remote state ---------------------------------


class Unplaceable(Base):
    """Reports a state outside the table (v1.0's UNSPECIFIED), then completes when released."""

    async def work(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work(say(updater, "Working."))
        await updater.update_status(TaskState.TASK_STATE_UNSPECIFIED, say(updater, "Hmm."))
        await self.release.wait()
        await updater.complete(say(updater, "Done after all."))


class Rejects(Base):
    async def work(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.reject(say(updater, "Not a job I take."))


class SubmitsOnly(Base):
    """Stays ``submitted``: the remote accepted the task and has not started it."""

    async def work(self, context: RequestContext, updater: TaskUpdater) -> None:
        await self.release.wait()
        await updater.complete(say(updater, "Started and finished."))


@pytest.mark.parametrize(("version", "streaming"), [("1.0", True), ("1.0", False), ("0.3", True)])
async def test_an_unknown_remote_state_is_shown_as_unknown(
    person: Person, version: str, streaming: bool
) -> None:
    executor = Unplaceable()
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(
            task_id, lambda d: (d["remote"] or {}).get("state") == "unknown"
        )
        assert detail["status"] == "running"  # the hub moves nothing on a state it cannot place
        page = await person.browser.get(f"/w/{person.workspace_id}/tasks/{task_id}")
        html = await page.get_data(as_text=True)
        assert 'data-remote-state="unknown"' in html and 'data-status="unknown"' in html
        assert "a state the hub does not know" in html
        executor.release.set()
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded" and detail["remote"]["state"] == "completed"
    html = await (await person.browser.get(f"/w/{person.workspace_id}/tasks/{task_id}")).get_data(
        as_text=True
    )
    assert 'data-status="unknown"' not in html and 'data-remote-state="completed"' in html


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_every_row_of_the_table_from_a_real_remote(person: Person, version: str) -> None:
    """submitted and working → running; rejected → failed, with the remote's words. The
    other rows (input-required, auth-required, completed, failed, canceled) have their own
    end-to-end tests in test_tasks.py and test_lifecycle.py."""
    waiting = SubmitsOnly()
    async with serve_remote(waiting, version=version) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        # The ledger notes the remote's state a moment before the hub's move is logged.
        await person.wait_task(
            task_id,
            lambda d: (d["remote"] or {}).get("state") == "submitted" and d["status"] == "running",
        )
        waiting.release.set()
        await person.wait_task(task_id, ended)
    async with serve_remote(Rejects(), version=version) as remote:
        agent = await person.add_remote(remote.url)
        detail = await person.wait_task(await person.task_for(agent["id"]), ended)
    assert detail["status"] == "failed" and detail["remote"]["state"] == "rejected"
    assert detail["error"] == "Remote rejected: Not a job I take."
