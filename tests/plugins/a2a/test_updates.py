"""How a call follows its remote task (``updates``), and what the webhook reads of a push,
step by step; ``test_push`` proves the same end to end against real remotes."""

from __future__ import annotations

from plugins.a2a_connector.updates import (
    POLL,
    POLL_PUSH_REFUSED,
    POLL_PUSH_SILENT,
    PUSH,
    Updates,
    poll_bound,
)
from plugins.a2a_connector.webhook import SeenPushes, push_token, pushed_task_id


def test_the_bound_is_the_slowest_poll() -> None:
    assert poll_bound(1.0) == 30.0
    assert poll_bound(0.05) == 0.05 * 64


def test_polling_backs_off_while_nothing_changes() -> None:
    updates = Updates(1.0)
    updates.registered_as(POLL)
    waits = [updates.after_read(changed=False, pushed=False) for _ in range(7)]
    assert waits == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert updates.after_read(changed=True, pushed=False) == 1.0


def test_with_pushes_the_hub_reads_once_per_bound_and_on_each_push() -> None:
    updates = Updates(1.0)
    updates.registered_as(PUSH)
    # What changed before the webhook was there needs no push.
    assert updates.after_read(changed=True, pushed=False) == 30.0
    assert updates.after_read(changed=False, pushed=False) == 30.0  # a quiet task
    updates.pushed()
    assert updates.take_pushes() and not updates.take_pushes()
    assert updates.after_read(changed=True, pushed=True) == 30.0
    assert updates.mode == PUSH


def test_a_change_without_a_push_falls_back_to_polling_until_pushes_resume() -> None:
    updates = Updates(1.0)
    updates.registered_as(PUSH)
    updates.after_read(changed=False, pushed=False)
    assert updates.after_read(changed=True, pushed=False) == 1.0
    assert updates.mode == POLL_PUSH_SILENT
    assert updates.after_read(changed=False, pushed=False) == 2.0  # polling's backoff
    assert updates.after_read(changed=False, pushed=True) == 30.0
    assert updates.mode == PUSH


def test_a_refused_webhook_polls() -> None:
    updates = Updates(1.0)
    updates.registered_as(POLL_PUSH_REFUSED)
    updates.pushed()  # a stray push changes how often nothing
    assert updates.after_read(changed=False, pushed=updates.take_pushes()) == 2.0
    assert updates.mode == POLL_PUSH_REFUSED


def test_each_task_has_its_own_token() -> None:
    one, other = push_token("k" * 40, "task_1"), push_token("k" * 40, "task_2")
    assert one != other and len(one) == 64
    assert push_token("j" * 40, "task_1") != one


def test_the_task_a_push_names() -> None:
    assert pushed_task_id({"statusUpdate": {"taskId": "t1", "status": {}}}) == "t1"
    assert pushed_task_id({"artifactUpdate": {"taskId": "t2"}}) == "t2"
    assert pushed_task_id({"task": {"id": "t3", "status": {}}}) == "t3"
    assert pushed_task_id({"id": "t4", "kind": "task"}) == "t4"  # as v0.3 senders post it
    assert pushed_task_id({"taskId": "t5", "kind": "status-update"}) == "t5"
    assert pushed_task_id({"statusUpdate": {"taskId": 7}}) is None
    assert pushed_task_id({}) is None


def test_a_body_seen_before_is_a_duplicate_per_task() -> None:
    seen = SeenPushes()
    assert seen.first_time("task_1", b"{}")
    assert not seen.first_time("task_1", b"{}")
    assert seen.first_time("task_2", b"{}")
    assert seen.first_time("task_1", b'{"a": 1}')
