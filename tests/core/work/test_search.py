"""Search in the core: the words a query is split into, the excerpt a long text shows, and
where its reads go."""

from __future__ import annotations

from typing import Any

import pytest
from tortoise import connections

from hub.core.store.models import Workspace
from hub.core.store.sqlite_reader import READER
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
