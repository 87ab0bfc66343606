"""An artifact a remote streams in chunks (``append``, ``lastChunk``) becomes one artifact."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part

from plugins.a2a_connector import untrusted
from plugins.a2a_connector.chunks import ChunkedArtifacts
from tests.plugins.a2a.conftest import Person
from tests.plugins.a2a.peers import Base, say, serve_remote
from tests.plugins.a2a.test_tasks import ended

PIECES = ["The report begins. ", "It goes on, ", "and ends here."]


class Chunked(Base):
    """Streams ``doc.txt`` in pieces, with progress between them, then a second artifact."""

    def __init__(self, pieces: list[str], *, mark_last: bool = True) -> None:
        super().__init__()
        self.pieces = pieces
        self.mark_last = mark_last

    async def work(self, context: RequestContext, updater: TaskUpdater) -> None:
        await updater.start_work(say(updater, "writing"))
        for number, piece in enumerate(self.pieces):
            last = number == len(self.pieces) - 1
            await updater.add_artifact(
                [Part(text=piece)],
                artifact_id="doc",
                name="doc.txt",
                append=number > 0,
                last_chunk=last and self.mark_last,
            )
            if number == 0:
                await updater.start_work(say(updater, "still writing"))
                await self.release.wait()
        await updater.add_artifact([Part(text="short")], artifact_id="note", name="note.txt")
        await updater.complete(say(updater, "Written."))


def content(artifact: dict[str, Any]) -> str:
    return base64.b64decode(artifact["url"].split(",", 1)[1]).decode()


@pytest.mark.parametrize(
    ("version", "streaming", "mark_last"),
    [("1.0", True, True), ("1.0", True, False), ("0.3", True, True), ("1.0", False, True)],
)
async def test_chunks_become_one_artifact(
    person: Person, version: str, streaming: bool, mark_last: bool
) -> None:
    executor = Chunked(PIECES, mark_last=mark_last)
    async with serve_remote(executor, version=version, streaming=streaming) as remote:
        agent = await person.add_remote(remote.url)
        task_id = await person.task_for(agent["id"])
        detail = await person.wait_task(task_id, lambda d: d["summary"] == "still writing")
        assert detail["artifacts"] == []  # the first piece is not the artifact
        executor.release.set()
        detail = await person.wait_task(task_id, ended)
    assert detail["status"] == "succeeded"
    artifacts = {a["name"]: a for a in detail["artifacts"]}
    assert sorted(artifacts) == ["doc.txt", "note.txt"]
    assert content(artifacts["doc.txt"]) == "".join(PIECES)
    assert content(artifacts["note.txt"]) == "short"
    created = [e for e in detail["timeline"] if e["type"] == "artifact.created"]
    assert len(created) == 2


async def test_a_huge_chunked_artifact_is_bounded(person: Person) -> None:
    pieces = ["x" * 10_000 for _ in range(40)]  # 400 000 characters in all
    executor = Chunked(pieces)
    executor.release.set()
    async with serve_remote(executor) as remote:
        agent = await person.add_remote(remote.url)
        detail = await person.wait_task(await person.task_for(agent["id"]), ended)
    [doc] = [a for a in detail["artifacts"] if a["name"] == "doc.txt"]
    text = content(doc)
    assert len(text) <= untrusted.ARTIFACT_TEXT_LIMIT
    assert text.endswith(untrusted.TRUNCATED) and text.startswith("x" * 1000)


def test_pieces_are_held_until_the_last_and_bounded_in_number() -> None:
    chunks = ChunkedArtifacts()

    def piece(key: str, text: str, **flags: bool) -> dict[str, Any]:
        return {"artifact": {"artifactId": key, "parts": [{"text": text}]}, **flags}

    assert chunks.update(piece("a", "1")) is None
    assert chunks.update(piece("a", "2", append=True)) is None
    whole = chunks.update(piece("a", "3", append=True, lastChunk=True))
    assert whole == {"artifactId": "a", "parts": [{"text": "1"}, {"text": "2"}, {"text": "3"}]}
    assert chunks.update(piece("b", "new")) is None
    assert chunks.update(piece("b", "again")) is None  # not an append: replaces
    for n in range(25):
        chunks.update(piece(f"c{n}", "open"))
    [held_b, *others] = chunks.remaining()
    assert held_b["parts"] == [{"text": "again"}] and len(others) == 19
    assert chunks.remaining() == []
    assert chunks.update({"artifact": "not a dict"}) is None
    assert chunks.update({"artifact": {"artifactId": ["bad"], "parts": []}}) == {
        "artifactId": ["bad"],
        "parts": [],
    }
