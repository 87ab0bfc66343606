"""``/livez`` and ``/readyz``: what an orchestrator's probes see (hub.host.readiness)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hub.config import Settings
from hub.core.store.database import close_database, migrate, open_database, pending_migrations
from hub.host.app import create_app
from hub.host.readiness import watch_worker

# The workers every hub process runs (the PostgreSQL relay only on PostgreSQL, the keeper of
# the planner's statistics only on SQLite).
WORKERS = {"log watch", "policy clock", "presence sweep", "outbox"}


def make_settings(tmp_path: Path, database_url: str) -> Settings:
    return Settings(database_url=database_url, data_dir=tmp_path, secret_key="s" * 40)


async def test_ready_once_serving_and_unready_when_a_worker_ends(
    database_url: str, tmp_path: Path, is_postgres: bool
) -> None:
    app = create_app(make_settings(tmp_path, database_url))
    async with app.test_app() as test_app:
        client = test_app.test_client()
        live = await client.get("/livez")
        assert live.status_code == 200 and await live.get_json() == {"status": "ok"}

        ready = await client.get("/readyz")
        body = await ready.get_json()
        assert ready.status_code == 200, body
        assert body["status"] == "ok" and body["notReady"] == []
        assert body["checks"]["database"] == "ok" and body["checks"]["migrations"] == "ok"
        expected = WORKERS | ({"postgres relay"} if is_postgres else {"planner statistics"})
        assert body["checks"]["workers"] == dict.fromkeys(sorted(expected), "ok")

        # A worker whose task ended by itself: the process must stop getting traffic.
        ended = asyncio.create_task(asyncio.sleep(0))
        await ended
        watch_worker(app, "mailer", lambda: not ended.done())
        unready = await client.get("/readyz")
        body = await unready.get_json()
        assert unready.status_code == 503
        assert body["status"] == "not ready" and body["notReady"] == ["worker:mailer"]
        assert body["checks"]["workers"]["mailer"] == "not running"


@pytest.mark.same_on_every_database
async def test_unready_while_a_migration_is_missing(tmp_path: Path) -> None:
    """A database left behind by an older version (migrated, then the hub upgraded)."""
    url = f"sqlite://{tmp_path / 'old.sqlite3'}"
    await migrate(url, target="models.0001_initial")
    await open_database(url, apply_migrations=False)
    try:
        pending = await pending_migrations()
        assert pending and pending[0] == "0002_status_indexes"
        app = create_app(make_settings(tmp_path, url))
        response = await app.test_client().get("/readyz")
        body = await response.get_json()
        assert response.status_code == 503 and body["notReady"] == ["migrations"]
        assert body["checks"]["migrations"].startswith("not applied: 0002_status_indexes")
    finally:
        await close_database()


@pytest.mark.same_on_every_database
async def test_unready_without_a_database(tmp_path: Path) -> None:
    """No database open at all: ``/readyz`` names it, ``/livez`` still answers."""
    app = create_app(make_settings(tmp_path, f"sqlite://{tmp_path / 'never.sqlite3'}"))
    client = app.test_client()
    assert (await client.get("/livez")).status_code == 200
    response = await client.get("/readyz")
    body = await response.get_json()
    assert response.status_code == 503 and body["notReady"] == ["database"]
    assert body["checks"]["database"].startswith("does not answer")
    assert body["checks"]["migrations"] == "unknown"
