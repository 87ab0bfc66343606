"""The LAP/0.1 gateway: where agents connect (WebSocket ``/lap/v0.1``, spec §10).

A plugin like any other: the hub's ``pyproject.toml`` declares it under the
``lineup.plugins`` entry points, and ``init_app`` attaches it. It talks to the core only
through its services (pairing, credentials, presence, ``append_event``) and the bus.

It also runs the presence sweeper (offline after two missed heartbeats, unreachable after
the grace period), started once the database is open and stopped, after every socket has
closed, before the database closes. Sockets are closed (1012) as soon as the hub is asked
to stop (``hub.host.lifecycle``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from quart import Quart

from hub.host.lifecycle import on_shutdown_requested
from hub.host.readiness import forget_worker, watch_worker
from hub.host.settings import settings_of
from plugins.lap_gateway.endpoint import lap_blueprint
from plugins.lap_gateway.gateway import Gateway

EXTENSION_KEY = "lineup.lap_gateway"


def init_app(app: Quart) -> None:
    gateway = Gateway(settings_of(app))
    app.extensions[EXTENSION_KEY] = gateway
    app.register_blueprint(lap_blueprint(gateway))
    on_shutdown_requested(app, gateway.close_sockets)

    @app.while_serving
    async def _run_gateway() -> AsyncGenerator[None, None]:
        gateway.start()
        watch_worker(app, "presence sweep", lambda: gateway.sweeper.running)
        yield
        forget_worker(app, "presence sweep")
        await gateway.stop()


__all__ = ["EXTENSION_KEY", "Gateway", "init_app"]
