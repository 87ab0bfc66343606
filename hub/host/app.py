"""The Quart application factory: where the host and every surface meet.

``create_app`` loads settings, attaches the host's own parts (error body, headers, request
guards, who is calling, health), then the people's surface (``hub.web``) and the plugins,
each through its ``init_app``; it opens the database in ``before_serving``: migrations
first, then the ORM. Shutdown stops the background work before the database closes, so no
loop queries a closing pool.

This is the one module of the host that knows the surfaces; plugins and channels reach the
host through its other modules (``hub.host.settings``, ``hub.host.lifecycle``, ...).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from quart import Quart

from hub import log_redaction, plugins, web
from hub.config import Settings, load_settings
from hub.core.approvals.policy_clock import PolicyClock
from hub.core.log.bus import DEFAULT_BUS
from hub.core.log.relay import PostgresRelay
from hub.core.log.watch import LOG_WATCH_PERIOD_S, LogWatch
from hub.core.people.two_factor import seal_plain_secrets
from hub.core.store.database import close_database, open_database
from hub.core.store.statistics import CHECK_PERIOD_S, StatisticsKeeper
from hub.core.workers import Periodic
from hub.host import (
    access,
    client_address,
    errors,
    headers,
    health,
    identity,
    path_ids,
    readiness,
    templates,
    text_input,
    websocket_limits,
)
from hub.host.settings import SETTINGS_KEY

logger = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, **overrides: Any) -> Quart:
    settings = settings or load_settings(**overrides)
    # Rooted in the web surface's package: its templates and static files are the app's own.
    app = Quart(web.__name__)
    templates.use_page_environment(app)
    app.config[SETTINGS_KEY] = settings
    app.config["SECRET_KEY"] = settings.secret_key
    log_redaction.install(
        [
            settings.secret_key,
            settings.telegram_bot_token,
            settings.telegram_webhook_secret,
            settings.feishu_app_secret,
            settings.feishu_verification_token,
            settings.feishu_encrypt_key,
            settings.slack_bot_token,
            settings.slack_app_token,
            settings.slack_signing_secret,
            settings.metrics_token,
            *log_redaction.secrets_in_url(settings.smtp_url),
        ]
    )
    DEFAULT_BUS.queue_size = settings.subscriber_queue_size

    # First: its request id and clock must be set before any other hook can refuse.
    access.init_app(app)
    errors.init_app(app)
    headers.init_app(app)
    path_ids.init_app(app)
    text_input.init_app(app)
    identity.init_app(app, public_url=settings.resolved_public_url)
    health.init_app(app)
    readiness.init_app(app)
    websocket_limits.init_app(app)
    web.init_app(app)
    plugins.load_plugins(app)
    # Last: the scope it rewrites is the one every other wrapper and the app itself see.
    client_address.init_app(app, trusted_proxy_hops=settings.trusted_proxy_hops)

    @app.before_serving
    async def _open_database() -> None:
        await open_database(settings.resolved_database_url)
        logger.debug("database open (%s)", "postgres" if settings.is_postgres else "sqlite")
        # The data step of migration 0019, which needs the secret key a migration lacks.
        sealed = await seal_plain_secrets(settings.secret_key)
        if sealed:
            logger.info("sealed %d two-factor secrets stored in the clear", sealed)

    if settings.is_postgres:

        @app.while_serving
        async def _relay_between_processes() -> AsyncIterator[None]:
            relaying = asyncio.create_task(PostgresRelay(settings.resolved_database_url).run())
            readiness.watch_worker(app, "postgres relay", lambda: not relaying.done())
            yield
            readiness.forget_worker(app, "postgres relay")
            relaying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relaying

    @app.while_serving
    async def _watch_the_log() -> AsyncIterator[None]:
        watch = LogWatch(min(settings.heartbeat_interval_s / 2, LOG_WATCH_PERIOD_S))
        watch.start()
        readiness.watch_worker(app, "log watch", lambda: watch.running)
        yield
        readiness.forget_worker(app, "log watch")
        await watch.stop()

    if not settings.is_postgres:  # PostgreSQL's autovacuum keeps its own

        @app.while_serving
        async def _keep_planner_statistics() -> AsyncIterator[None]:
            statistics = StatisticsKeeper()

            async def look() -> None:
                await statistics.look()

            keeper = Periodic("planner statistics", CHECK_PERIOD_S, look)
            keeper.start()
            readiness.watch_worker(app, "planner statistics", lambda: keeper.running)
            yield
            readiness.forget_worker(app, "planner statistics")
            await keeper.stop()

    @app.while_serving
    async def _run_policy_clock() -> AsyncIterator[None]:
        clock = PolicyClock()
        clock.start()
        readiness.watch_worker(app, "policy clock", lambda: clock.running)
        yield
        readiness.forget_worker(app, "policy clock")
        await clock.stop()

    @app.after_serving
    async def _close_database() -> None:
        await close_database()

    return app
