"""A returning client's cursor against the log: resync when it cannot be continued, and a new
epoch, started once, when it proves the log lost events it had acknowledged."""

from __future__ import annotations

import asyncio
import logging

import pytest

from hub.core.log.epochs import AHEAD_OF_LOG, EPOCH_CHANGED, resume
from hub.core.log.events import append_event
from hub.core.store.models import Workspace

LOST = "lost events it had acknowledged"


async def logged(workspace: Workspace, count: int) -> Workspace:
    for n in range(count):
        await append_event(workspace.id, "note.added", {"n": n}, actor="system")
    return await Workspace.get(id=workspace.id)


async def test_a_cursor_within_the_log_resumes_where_it_is(workspace: Workspace) -> None:
    workspace = await logged(workspace, 3)
    position = await resume(workspace, workspace.epoch, 2, client="user usr_a")
    assert (position.resync, position.replay_after) == (None, 2)
    assert position.workspace.epoch == workspace.epoch


async def test_another_epoch_resyncs_and_changes_nothing(workspace: Workspace) -> None:
    workspace = await logged(workspace, 3)
    for after in (1, 99):
        position = await resume(workspace, "evt_another_log", after, client="user usr_a")
        assert (position.resync, position.replay_after) == (EPOCH_CHANGED, 3)
    assert (await Workspace.get(id=workspace.id)).epoch == workspace.epoch


async def test_ahead_without_an_epoch_resyncs_but_proves_nothing(workspace: Workspace) -> None:
    workspace = await logged(workspace, 3)
    position = await resume(workspace, None, 99, client="user usr_a")
    assert (position.resync, position.replay_after) == (AHEAD_OF_LOG, 3)
    assert (await Workspace.get(id=workspace.id)).epoch == workspace.epoch


async def test_ahead_in_the_logs_own_epoch_starts_one_new_epoch_for_every_reporter(
    workspace: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    # Ten clients that saw sequence 9 come back together to a log that ends at 3: each is
    # resynced, one new epoch is started (on PostgreSQL over several pooled connections),
    # and the operator is warned once.
    workspace = await logged(workspace, 3)
    with caplog.at_level(logging.WARNING, logger="hub.core.log.epochs"):
        positions = await asyncio.gather(
            *(resume(workspace, workspace.epoch, 9, client=f"agent agt_{n}") for n in range(10))
        )
    epochs = {position.workspace.epoch for position in positions}
    assert len(epochs) == 1 and workspace.epoch not in epochs
    assert (await Workspace.get(id=workspace.id)).epoch in epochs
    assert {(p.resync, p.replay_after) for p in positions} == {(AHEAD_OF_LOG, 3)}
    warnings = [r for r in caplog.records if LOST in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    # A reporter that read the workspace before the epoch changed (another hub process, say)
    # reaches the conditional update late: it changes nothing, and hands out the new epoch.
    late = await resume(workspace, workspace.epoch, 9, client="user usr_late")
    assert late.workspace.epoch in epochs and late.resync == AHEAD_OF_LOG
    assert (await Workspace.get(id=workspace.id)).epoch in epochs
    assert len([r for r in caplog.records if LOST in r.getMessage()]) == 1
