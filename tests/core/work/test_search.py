"""Search in the core: the words a query is split into, the excerpt a long text shows, where
its reads go, and how far down its matches it ranks."""

from __future__ import annotations

from typing import Any

import pytest
from tortoise import connections

from hub.core.store.models import Workspace
from hub.core.store.sqlite_reader import READER
from hub.core.work import search as searching
from hub.core.work.search import BadSearch, excerpt, search, search_words
from hub.core.work.tasks import create_task
from tests.core.agent_reports import make_agent


def test_a_query_is_words_whatever_its_punctuation() -> None:
    assert search_words('"Deploy" NEAR(a*) -x task_01JD') == [
        "deploy", "near", "a", "x", "task", "01jd",
    ]  # fmt: skip
    assert search_words("部署 服务") == ["部署", "服务"]
    for nothing in ("", "  ", '"*-()', "x" * 201, "a " * 9):
        with pytest.raises(BadSearch):
            search_words(nothing)


def test_a_long_text_shows_where_the_word_is() -> None:
    text = "filler " * 100 + "the lighthouse stands" + " more" * 100
    shown = excerpt(text, ["lighthouse"])
    assert "lighthouse" in shown and shown.startswith("…") and shown.endswith("…")
    assert len(shown) <= 202
    assert excerpt("short  text\n", ["x"]) == "short text"


async def test_a_search_reads_beside_the_writer_in_a_bounded_number_of_queries(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = await make_agent(workspace, "Beacon")
    for n in range(5):
        await create_task(
            workspace.id, f"Beacon check {n}", by="user:usr_me", target_agent_id=agent.id
        )
    sent: dict[str, int] = {}
    for name in connections.db_config:
        client = connections.get(name)
        for method in ("execute_query", "execute_query_dict"):
            real = getattr(client, method)

            async def counted(
                query: str, values: Any = None, *, _real: Any = real, _n: str = name
            ) -> Any:
                sent[_n] = sent.get(_n, 0) + 1
                return await _real(query, values)

            monkeypatch.setattr(client, method, counted)
    found = await search(workspace.id, "beacon", limit=3)
    assert len(found.items) == 3 and found.next_cursor
    assert {hit.kind for hit in found.items} <= {"task", "agent"}
    on_sqlite = connections.get("default").capabilities.dialect == "sqlite"
    assert set(sent) == ({READER} if on_sqlite else {"default"})
    # The ranking, then the rows of each kind on the page.
    assert sum(sent.values()) <= 3


async def test_only_the_newest_matches_are_ranked_and_every_one_is_found_once(
    make_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, mine = await make_user("owner")
    _, theirs = await make_user("stranger")
    agent = await make_agent(mine, "Lighthouse keeper")
    best = await create_task(
        mine.id,
        "Lighthouse, the lighthouse: lighthouse",
        by="user:usr_me",
        target_agent_id=agent.id,
    )
    newer = [
        await create_task(
            mine.id, f"Note {n} on the lighthouse", by="user:usr_me", target_agent_id=agent.id
        )
        for n in range(6)
    ]
    # Their matches are newer than every one of mine: a scan newest first meets them first.
    other = await make_agent(theirs, "Harbour")
    for n in range(8):
        await create_task(theirs.id, f"Lighthouse {n}", by="user:usr_you", target_agent_id=other.id)
    monkeypatch.setattr(searching, "RANKED", 3)

    hits = []
    cursor = None
    while True:
        page = await search(mine.id, "lighthouse", limit=2, cursor=cursor)
        assert len(page.items) <= 2
        hits += page.items
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    ids = [hit.id for hit in hits]
    assert len(ids) == len(set(ids))
    assert set(ids) == {agent.id, best.id, *(task.id for task in newer)}
    # The agent, found by part of its name, is ranked though it is the oldest; then the
    # three newest tasks by score; the rest newest first, the best match among them, last.
    ranked = [hit for hit in hits if hit.score >= 0]
    assert ranked[0].id == agent.id
    assert {hit.id for hit in ranked[1:]} == {task.id for task in newer[-3:]}
    unranked = hits[len(ranked) :]
    assert all(hit.score < 0 for hit in unranked)
    assert [hit.id for hit in unranked] == [task.id for task in (*newer[2::-1], best)]

    # Ranked with the others, the best match comes before them: only its age put it last.
    monkeypatch.setattr(searching, "RANKED", 1000)
    everything = [hit.id for hit in (await search(mine.id, "lighthouse", limit=20)).items]
    assert sorted(everything) == sorted(ids)
    assert everything.index(best.id) < min(everything.index(task.id) for task in newer)
