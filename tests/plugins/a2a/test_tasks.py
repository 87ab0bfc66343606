"""Tasks for remote agents, end to end against real a2a-sdk servers, v1.0 and v0.3."""

from __future__ import annotations

import base64

import pytest

from tests.plugins.a2a.conftest import Person
from tests.plugins.a2a.peers import AsksInput, Endless, Fails, Instant, Slow, serve_remote

GENERATIONS = pytest.mark.parametrize(
    ("version", "streaming"), [("1.0", True), ("1.0", False), ("0.3", True), ("0.3", False)]
)


def ended(detail: dict) -> bool:  # type: ignore[type-arg]
    return detail["status"] in {"succeeded", "failed", "cancelled"}


@GENERATIONS
async def test_an_agent_that_completes_at_once(
    person: Person, version: str, streaming: bool
) -> None:
    async with serve_remote(Instant(), version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        assert agent["runtime"] == "a2a"
        assert agent["remote"]["protocolVersion"] == version
        assert agent["remote"]["streaming"] is streaming
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded"
    assert detail["summary"] == "The answer is 42."
    [artifact] = detail["artifacts"]
    assert artifact["name"] == "answer.txt"
    assert base64.b64decode(artifact["url"].split(",", 1)[1]) == b"42"
    assert remote.executor.inputs == ["Paint the button"]
    actors = {e["actor"] for e in detail["timeline"] if e["type"] != "task.created"}
    assert actors == {f"agent:{agent['id']}"}
    if version == "1.0":
        methods = [r["headers"].get("a2a-version") for r in remote.requests if r["path"] == "/a2a"]
        assert methods and set(methods) == {"1.0"}


@pytest.mark.parametrize(("version", "streaming"), [("1.0", True), ("0.3", True), ("1.0", False)])
async def test_a_slow_agent_reports_progress_then_an_artifact(
    person: Person, version: str, streaming: bool
) -> None:
    executor = Slow()
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"], "Write the report")
        detail = await person.wait_task(task_id, lambda d: d["summary"] == "step 1 of 3")
        assert detail["status"] == "running"
        assert detail["remote"]["updates"] == ("stream" if streaming else "poll")
        executor.release.set()
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded"
    assert detail["summary"] == "Report ready."
    assert [a["name"] for a in detail["artifacts"]] == ["report.md"]
    summaries = [e["payload"].get("summary") for e in detail["timeline"]]
    assert "step 1 of 3" in summaries
    if streaming:  # a poll may step over the middle reports; a stream never does
        assert "step 2 of 3" in summaries and "step 3 of 3" in summaries


@GENERATIONS
async def test_an_agent_that_asks_for_input_is_answered_through_the_api(
    person: Person, version: str, streaming: bool
) -> None:
    executor = AsksInput()
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, lambda d: d["status"] == "waiting_for_human")
        [card] = detail["interactions"]
        assert card["type"] == "input"
        assert "Which colour should the button be?" in card["card"]["description"]
        status, body = await person.post(f"/interactions/{card['id']}/respond", {"text": "teal"})
        assert status == 200, body
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded"
    assert detail["summary"] == "Painted it teal."
    assert executor.inputs == ["Paint the button", "teal"]


async def test_offered_options_become_a_choice_card(person: Person) -> None:
    executor = AsksInput(options=["red", "green", "blue"])
    async with serve_remote(executor) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, lambda d: d["status"] == "waiting_for_human")
        [card] = detail["interactions"]
        assert card["type"] == "choice"
        labels = {o["id"]: o["label"] for o in card["card"]["options"]}
        assert sorted(labels.values()) == ["blue", "green", "red"]
        green = next(i for i, label in labels.items() if label == "green")
        status, _ = await person.post(f"/interactions/{card['id']}/respond", {"optionId": green})
        assert status == 200
        detail = await person.wait_task(task_id, ended)
    assert detail["summary"] == "Painted it green."


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_an_agent_that_fails(person: Person, version: str) -> None:
    async with serve_remote(Fails(), version=version) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "failed"
    assert "The build server refused the job." in detail["error"]


@pytest.mark.parametrize(("version", "streaming"), [("1.0", True), ("0.3", True), ("1.0", False)])
async def test_cancel_sends_cancel_task_and_the_remote_confirms(
    person: Person, version: str, streaming: bool
) -> None:
    executor = Endless()
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        await person.wait_task(task_id, lambda d: d["status"] == "running")
        status, body = await person.post(f"/tasks/{task_id}/cancel", {"reason": "not needed"})
        assert status == 202, body
        assert body["status"] == "running"  # a request, not yet a state
        detail = await person.wait_task(task_id, ended)
        assert executor.cancelled.is_set()
    assert detail["status"] == "cancelled"


async def test_remote_words_become_messages_in_the_tasks_conversation(person: Person) -> None:
    async with serve_remote(Instant()) as remote:
        agent = await person.add_remote(remote.url)
        status, conversation = await person.post(
            "/conversations", {"title": "Buttons", "agentIds": [agent["id"]]}
        )
        assert status == 201, conversation
        task_id = await person.task_for(agent["id"], conversationId=conversation["id"])
        await person.wait_task(task_id, ended)
    _, body = await person.get(f"/conversations/{conversation['id']}/messages")
    said = [(m["author"], m["content"]) for m in body["messages"]]
    assert (f"agent:{agent['id']}", "The answer is 42.") in said
