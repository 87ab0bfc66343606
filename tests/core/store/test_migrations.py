"""Schema migrations: the models match the migrations, and upgrading keeps the data."""

from __future__ import annotations

from pathlib import Path

import pytest
from tortoise import Tortoise, connections
from tortoise.context import TortoiseContext

import hub.core.store.migrations
from hub.core.log.events import last_sequence
from hub.core.store.database import migrate, tortoise_config
from hub.core.store.models import Event, User, Workspace
from hub.testing import TestDatabases, opened

MIGRATIONS = sorted(
    path.stem
    for path in Path(hub.core.store.migrations.__file__).parent.glob("[0-9][0-9][0-9][0-9]_*.py")
)

# Rows as the first schema stores them: written with plain SQL, not today's models.
SEED = """
INSERT INTO workspace (id, name, last_sequence, epoch, created_at)
  VALUES ('ws_old', 'Old', 1, 'evt_epoch', '2026-01-01 00:00:00+00:00');
INSERT INTO user_account (id, email, display_name, password_hash, created_at)
  VALUES ('usr_old', 'old@example.com', 'Old', NULL, '2026-01-01 00:00:00+00:00');
INSERT INTO membership (id, workspace_id, user_id, role, created_at)
  VALUES ('mem_old', 'ws_old', 'usr_old', 'owner', '2026-01-01 00:00:00+00:00');
INSERT INTO event (workspace_id, sequence, id, type, actor, payload, occurred_at, recorded_at)
  VALUES ('ws_old', 1, 'e-old', 'note.added', 'system', '{"kept": true}',
          '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00');
"""


async def test_models_and_migrations_agree() -> None:
    """A model change without its migration would be silently missing from the database."""
    from tortoise.cli.cli import tortoise_cli_context
    from tortoise.migrations.autodetector import MigrationAutodetector

    config = tortoise_config("sqlite://:memory:")
    async with tortoise_cli_context(config) as context:
        changes = await MigrationAutodetector(context.apps, config["apps"]).changes()
    assert not changes, "models changed without a migration: run `make migrations NAME=...`"


# Upgrading from the first schema runs every migration over data; from the last two, the
# newest ones over data seeded where they start. A schema in between adds no migration that
# these do not run (migrations never change once released), and each start costs a whole
# chain (10-30 s on this machine), so they are not each a case.
UPGRADE_STARTS = sorted({MIGRATIONS[0], *MIGRATIONS[-3:-1]})


@pytest.mark.parametrize("older", UPGRADE_STARTS)
async def test_upgrading_from_an_older_schema_keeps_the_data(
    older: str, tmp_path: Path, test_databases: TestDatabases
) -> None:
    url = await _empty_database(test_databases, tmp_path)
    try:
        await migrate(url, target=f"models.{older}")
        async with TortoiseContext():
            await Tortoise.init(config=tortoise_config(url))
            await connections.get("default").execute_script(SEED)
            await Tortoise.close_connections()
        await migrate(url)
        async with opened(url):
            assert (await User.get(id="usr_old")).email == "old@example.com"
            assert await last_sequence("ws_old") == 1
            event = await Event.get(workspace_id="ws_old", sequence=1)
            assert event.payload == {"kept": True}
            assert (await Workspace.get(id="ws_old")).epoch == "evt_epoch"
    finally:
        await test_databases.drop(url)


def test_there_is_an_upgrade_path_to_test() -> None:
    assert len(MIGRATIONS) >= 2 and MIGRATIONS[0] == "0001_initial"


async def _empty_database(test_databases: TestDatabases, tmp_path: Path) -> str:
    """A database with no schema at all (not a copy of the migrated template)."""
    if test_databases.postgres_url is None:
        return f"sqlite://{tmp_path / 'old.sqlite3'}"
    name = "lineup_upgrade_" + tmp_path.name.replace("-", "_")[-20:].lower()
    await test_databases._admin(f'CREATE DATABASE "{name}"')
    return test_databases._pg_url(name)
