"""Liveness (``/livez``) and readiness (``/readyz``) for an orchestrator's probes.

``/livez`` answers as long as the process serves requests, without touching the database:
a restart cannot fix a database that is away, so liveness must not depend on it.
``/readyz`` says whether this process should get traffic: the database answers, every
migration this version ships is applied, and every background worker the app started is
still running. Otherwise it answers 503 with what is not ready, so an operator reading the
probe's output knows where to look.

Workers are registered by whoever starts them (``watch_worker``), with a function telling
whether the worker is alive; a worker whose task ended by surprise makes the process unready.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from quart import Blueprint, Quart, Response, current_app, jsonify
from tortoise import connections

from hub.core.store.database import pending_migrations

blueprint = Blueprint("readiness", __name__)

_WORKERS = "lineup.readiness.workers"


def watch_worker(app: Quart, name: str, running: Callable[[], bool]) -> None:
    """Count the worker ``name`` in ``/readyz`` from now on; ``running`` says if it is alive."""
    app.extensions.setdefault(_WORKERS, {})[name] = running


def forget_worker(app: Quart, name: str) -> None:
    """Stop counting ``name`` (it was stopped on purpose, at shutdown)."""
    app.extensions.get(_WORKERS, {}).pop(name, None)


@blueprint.get("/livez")
async def livez() -> dict[str, str]:
    return {"status": "ok"}


async def _database_problem() -> str | None:
    try:
        await connections.get("default").execute_query("SELECT 1")
    except Exception as error:
        return f"does not answer ({error.__class__.__name__})"
    return None


async def _migrations_problem() -> str | None:
    try:
        pending = await pending_migrations()
    except Exception as error:
        return f"cannot be read ({error.__class__.__name__})"
    return f"not applied: {', '.join(pending)}" if pending else None


def _workers_problems() -> dict[str, str]:
    workers: dict[str, Callable[[], bool]] = current_app.extensions.get(_WORKERS, {})
    return {name: "not running" for name, running in sorted(workers.items()) if not running()}


@blueprint.get("/readyz")
async def readyz() -> Response:
    database = await _database_problem()
    # Without a database the migrations cannot be read; say so once, under the database.
    migrations = None if database else await _migrations_problem()
    workers = _workers_problems()
    checks: dict[str, Any] = {
        "database": database or "ok",
        "migrations": migrations or ("unknown" if database else "ok"),
        "workers": {
            name: workers.get(name, "ok")
            for name in sorted(current_app.extensions.get(_WORKERS, {}))
        },
    }
    not_ready = [
        *(["database"] if database else []),
        *(["migrations"] if migrations else []),
        *(f"worker:{name}" for name in workers),
    ]
    response = jsonify(
        {"status": "not ready" if not_ready else "ok", "notReady": not_ready, "checks": checks}
    )
    response.status_code = 503 if not_ready else 200
    return response


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)


__all__ = ["forget_worker", "init_app", "watch_worker"]
