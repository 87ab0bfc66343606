"""Naming what went wrong when the database itself fails, instead of a bare 500.

A PostgreSQL server that is down or restarting, a SQLite file made read-only, a full disk:
none is a bug in the hub, and each has a next step a person can take. ``storage_fault``
turns such an exception into an ``Unavailable`` error (503 over HTTP, "try again later" on
a socket) with a stable code; anything else is left to the caller's internal-error path.
The drivers' exceptions are matched by name and message so the core imports neither
asyncpg nor sqlite3's error classes (Tortoise re-wraps both differently per backend). Only
a failure raised from within the database layer counts: a refused connection to an A2A
agent or an SMTP server is not the database being down.
"""

from __future__ import annotations

from tortoise.exceptions import ValidationError

from hub.core.errors import InvalidInput, Unavailable

# Lower-case fragments of driver messages, and what they mean for a person.
_READ_ONLY = ("attempt to write a readonly database", "readonly database")
_FULL = ("database or disk is full", "disk full", "no space left on device")
_UNREACHABLE = (
    "connection refused",
    "connection was closed",
    "connection is closed",
    "connection lost",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
    "terminating connection due to administrator command",
    "pool is closing",
    "cannot connect",
    "server closed the connection",
    # asyncpg, on a pooled connection the server cut in the middle of an operation
    "another operation is in progress",
)
_DATABASE_PACKAGES = ("tortoise", "asyncpg", "sqlite3", "aiosqlite", "pypika")
_UNREACHABLE_TYPES = (
    "DBConnectionError",
    "ConnectionDoesNotExistError",
    "CannotConnectNowError",
    "AdminShutdownError",
    "InterfaceError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "InternalClientError",  # asyncpg's protocol left mid-operation by a vanished server
)


def storage_fault(error: BaseException) -> Unavailable | None:
    """The person-facing error for a database failure, or None if ``error`` is not one."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__
    if not any(_raised_by_database(e) for e in chain):
        return None
    text = " ".join(str(e).lower() for e in chain)
    names = {type(e).__name__ for e in chain}
    if any(fragment in text for fragment in _READ_ONLY):
        return Unavailable(
            "The hub's database file is read-only; nothing was written.",
            code="storage_read_only",
            hint="Give the hub's user write access to the database file and its directory.",
        )
    if any(fragment in text for fragment in _FULL):
        return Unavailable(
            "The disk holding the hub's database is full; nothing was written.",
            code="storage_full",
            hint="Free disk space where the database lives, then retry.",
        )
    if names & set(_UNREACHABLE_TYPES) or any(fragment in text for fragment in _UNREACHABLE):
        return Unavailable(
            "The hub cannot reach its database right now; nothing was written.",
            code="database_unavailable",
        )
    return None


def _raised_by_database(error: BaseException) -> bool:
    if type(error).__module__.split(".")[0] in _DATABASE_PACKAGES:
        return True
    frame = error.__traceback__
    while frame is not None:
        module = frame.tb_frame.f_globals.get("__name__", "")
        if module.split(".")[0] in _DATABASE_PACKAGES:
            return True
        frame = frame.tb_next
    return False


def refused_value(error: BaseException) -> InvalidInput | None:
    """The caller's error for a value the ORM refused to put in a query or a row, or None.

    Ids and fields that arrive in bodies and frames are checked by their schemas; one that
    slips through (an id longer than any id, say) is still the caller's input that does not
    fit, not a failure of the hub, and changes nothing."""
    if not isinstance(error, ValidationError):
        return None
    return InvalidInput(
        f"A value sent does not fit where it goes ({error}).",
        code="value_does_not_fit",
        hint="Check the ids and the lengths of the fields sent.",
    )
