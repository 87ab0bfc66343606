"""What ``lineup serve`` checks before it serves, so that a hub that cannot start says why
in one line an operator can act on, instead of a traceback from deep in the server.

Each failure is a ``StartupFailure`` with a diagnostic code, a next step and the command's
exit status, one per class of cause (documented in docs/deploy.md):

- 2: a setting is wrong (``ConfigurationError``, raised while the settings load);
- 3: the database: unreachable (``database_unreachable``) or its migrations fail
  (``migration_failed``);
- 4: the address to listen on: taken (``port_in_use``) or not allowed (``port_not_allowed``).
"""

from __future__ import annotations

import errno
import logging
import socket
from typing import ClassVar
from urllib.parse import urlsplit, urlunsplit

from hub.core.errors import HubError
from hub.core.store.database import migrate

logger = logging.getLogger(__name__)

EXIT_DATABASE = 3
EXIT_ADDRESS = 4


class StartupFailure(HubError):
    """``lineup serve`` cannot start; ``exit_status`` says which class of cause."""

    code = "startup_failed"
    exit_status: ClassVar[int] = EXIT_DATABASE


class DatabaseFailure(StartupFailure):
    exit_status = EXIT_DATABASE


class AddressFailure(StartupFailure):
    exit_status = EXIT_ADDRESS


def listening_socket(host: str, port: int) -> socket.socket:
    """The bound, listening socket the server takes over; the port is held from here on,
    so no other process can take it between this check and serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError as error:
        sock.close()
        where = f"{host}:{port}"
        if error.errno == errno.EADDRINUSE:
            raise AddressFailure(
                f"Port {port} on {host} is in use by another process.",
                code="port_in_use",
                hint=f"Stop what listens on {where} (`ss -ltnp 'sport = :{port}'`), "
                "or set LINEUP_PORT to a free port.",
            ) from None
        raise AddressFailure(
            f"Cannot listen on {where}: {error.strerror or error}.",
            code="port_not_allowed",
            hint="Check LINEUP_HOST is an address of this machine, and use a port above "
            "1023 unless the hub may bind privileged ports.",
        ) from None
    return sock


async def prepare_database(database_url: str) -> None:
    """Reach the database and bring its schema up to date, or fail in one line."""
    try:
        await migrate(database_url)
    except HubError:
        raise
    except Exception as error:
        logger.debug("preparing the database failed", exc_info=True)
        shown = _without_password(database_url)
        reason = _first_line(error)
        if _is_connection_failure(error):
            raise DatabaseFailure(
                f"Cannot reach the database {shown}: {reason}.",
                code="database_unreachable",
                hint="Check the database is running and LINEUP_DATABASE_URL (host, port, "
                "name, user, password), then start again.",
            ) from None
        raise DatabaseFailure(
            f"Bringing the database {shown} up to date failed: {reason}.",
            code="migration_failed",
            hint="Run `lineup migrate` with LINEUP_LOG_LEVEL=DEBUG to see the failing step; "
            "a database a newer hub has migrated needs that hub, else restore the last backup.",
        ) from None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":[redacted]@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _is_connection_failure(error: BaseException) -> bool:
    """Whether the database could not be reached or refused the login (asyncpg and Tortoise
    wrap the socket's own error, or name it only by class)."""
    seen: BaseException | None = error
    while seen is not None:
        name = type(seen).__name__
        if isinstance(seen, OSError) or name in {
            "DBConnectionError",
            "InvalidPasswordError",
            "InvalidAuthorizationSpecificationError",
            "InvalidCatalogNameError",
            "CannotConnectNowError",
            "ConnectionDoesNotExistError",
        }:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
