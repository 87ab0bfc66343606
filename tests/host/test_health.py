"""The app factory's health and metrics endpoints, and the JSON error shape."""

from __future__ import annotations

from pathlib import Path

from hub.config import Settings
from hub.core.log.events import append_event
from hub.core.store.models import Workspace
from hub.host.app import create_app


def make_app(tmp_path: Path, database_url: str):  # type: ignore[no-untyped-def]
    return create_app(Settings(database_url=database_url, data_dir=tmp_path, secret_key="s" * 40))


async def test_healthz_and_metrics(db: str, tmp_path: Path, workspace: Workspace) -> None:
    app = make_app(tmp_path, db)
    client = app.test_client()
    response = await client.get("/healthz")
    assert response.status_code == 200 and await response.get_json() == {"status": "ok"}
    await append_event(workspace.id, "note.added", {}, actor="system")
    metrics = await (await client.get("/metrics")).get_data(as_text=True)
    assert 'lineup_events_appended_total{family="note"}' in metrics


async def test_unknown_paths_answer_in_the_error_shape(db: str, tmp_path: Path) -> None:
    response = await make_app(tmp_path, db).test_client().get("/nowhere")
    assert response.status_code == 404
    body = await response.get_json()
    assert set(body["error"]) == {"code", "message", "hint"}
    assert body["error"]["code"] == "not_found"
