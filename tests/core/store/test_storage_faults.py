"""Which failures are named as the database's, and which are left to the internal-error path.

The end-to-end proofs are in ``tests/faults``; these pin the driver errors seen there, so a
rare interleaving (a pooled connection the server cut mid-operation) is not left to chance.
"""

from __future__ import annotations

import asyncpg
import pytest

from hub.core.store.storage_faults import storage_fault


def raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.CannotConnectNowError("the database system is shutting down"),
        asyncpg.exceptions.AdminShutdownError(
            "terminating connection due to administrator command"
        ),
        asyncpg.exceptions.InternalClientError(
            "cannot switch to state 15; another operation (2) is in progress"
        ),
        asyncpg.exceptions.InterfaceError("pool is closing"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_a_postgres_that_went_away_is_named_database_unavailable(error: Exception) -> None:
    fault = storage_fault(raised(error))
    assert fault is not None
    assert fault.code == "database_unavailable"
    assert fault.close_code == 1013


def test_a_refused_connection_outside_the_database_layer_is_not_the_database() -> None:
    assert storage_fault(raised(ConnectionRefusedError(111, "Connect call failed"))) is None


def test_a_bug_in_the_hub_is_not_a_database_fault() -> None:
    assert storage_fault(raised(KeyError("missing"))) is None
