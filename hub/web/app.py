"""The Quart application factory.

``create_app`` loads settings, lets each component attach itself (``init_app``), and opens
the database in ``before_serving``: migrations first, then the ORM. Shutdown stops the
background work before the database closes, so no loop queries a closing pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from quart import Quart

from hub import log_redaction, plugins
from hub.config import Settings, load_settings
from hub.core.bus import DEFAULT_BUS
from hub.core.database import close_database, open_database
from hub.core.log_watch import LOG_WATCH_PERIOD_S, LogWatch
from hub.core.policy_clock import PolicyClock
from hub.core.relay import PostgresRelay
from hub.web import (
    api,
    api_docs,
    client_socket,
    errors,
    health,
    pages,
    path_ids,
    security_headers,
    text_input,
)

logger = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, **overrides: Any) -> Quart:
    settings = settings or load_settings(**overrides)
    app = Quart("hub.web")
    app.config["LINEUP"] = settings
    app.config["SECRET_KEY"] = settings.secret_key
    log_redaction.install(
        [
            settings.secret_key,
            settings.telegram_bot_token,
            settings.telegram_webhook_secret,
            *log_redaction.secrets_in_url(settings.smtp_url),
        ]
    )
    DEFAULT_BUS.queue_size = settings.subscriber_queue_size

    errors.init_app(app)
    security_headers.init_app(app)
    path_ids.init_app(app)
    text_input.init_app(app)
    health.init_app(app)
    pages.init_app(app)
    api.init_app(app, settings)
    api_docs.init_app(app)
    client_socket.init_app(app)
    plugins.load_plugins(app)

    @app.before_serving
    async def _open_database() -> None:
        await open_database(settings.resolved_database_url)
        logger.debug("database open (%s)", "postgres" if settings.is_postgres else "sqlite")

    if settings.is_postgres:

        @app.while_serving
        async def _relay_between_processes() -> AsyncIterator[None]:
            relaying = asyncio.create_task(PostgresRelay(settings.resolved_database_url).run())
            yield
            relaying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relaying

    @app.while_serving
    async def _watch_the_log() -> AsyncIterator[None]:
        watch = LogWatch(min(settings.heartbeat_interval_s / 2, LOG_WATCH_PERIOD_S))
        watch.start()
        yield
        await watch.stop()

    @app.while_serving
    async def _run_policy_clock() -> AsyncIterator[None]:
        clock = PolicyClock()
        clock.start()
        yield
        await clock.stop()

    @app.after_serving
    async def _close_database() -> None:
        await close_database()

    return app


def settings_of(app: Quart) -> Settings:
    settings: Settings = app.config["LINEUP"]
    return settings
