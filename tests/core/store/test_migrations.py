"""Schema migrations: the models match the migrations, and upgrading keeps the data."""

from __future__ import annotations

import importlib
from pathlib import Path

import pyotp
import pytest
from tortoise import Tortoise, connections
from tortoise.context import TortoiseContext

import hub.core.store.migrations
from hub.core.log.events import last_sequence
from hub.core.people.sealing import unseal
from hub.core.people.two_factor import check_code, seal_plain_secrets
from hub.core.store.database import migrate, tortoise_config
from hub.core.store.models import Agent, Event, Task, User, Workspace
from hub.core.work.search import search
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


async def test_a_hub_older_than_admins_makes_its_oldest_account_the_admin(
    tmp_path: Path, test_databases: TestDatabases
) -> None:
    url = await _empty_database(test_databases, tmp_path)
    try:
        await migrate(url, target="models.0016_presence_and_delivery")
        async with TortoiseContext():
            await Tortoise.init(config=tortoise_config(url))
            await connections.get("default").execute_script(
                SEED + "INSERT INTO user_account (id, email, display_name, created_at) VALUES "
                "('usr_new', 'new@example.com', 'New', '2026-02-01 00:00:00+00:00');"
            )
            await Tortoise.close_connections()
        await migrate(url)
        async with opened(url):
            assert (await User.get(id="usr_old")).is_admin
            assert not (await User.get(id="usr_new")).is_admin
    finally:
        await test_databases.drop(url)


async def test_two_factor_secrets_stored_in_the_clear_are_sealed_and_keep_working(
    tmp_path: Path, test_databases: TestDatabases
) -> None:
    """0018 stored TOTP secrets as they were; after 0019 the hub seals them as it starts
    (``seal_plain_secrets``, which needs the key a migration lacks), and their codes work."""
    plain, key = pyotp.random_base32(), "upgrade-secret-key-" + "u" * 32
    url = await _empty_database(test_databases, tmp_path)
    try:
        await migrate(url, target="models.0018_two_factor")
        async with TortoiseContext():
            await Tortoise.init(config=tortoise_config(url))
            await connections.get("default").execute_script(
                SEED + f"UPDATE user_account SET totp_secret = '{plain}' WHERE id = 'usr_old';"
            )
            await Tortoise.close_connections()
        await migrate(url)
        async with opened(url):
            assert await seal_plain_secrets(key) == 1
            assert await seal_plain_secrets(key) == 0  # the next start finds none left
            user = await User.get(id="usr_old")
            assert user.totp_secret_sealed is not None and plain not in user.totp_secret_sealed
            assert unseal(user.totp_secret_sealed, key) == plain
            await check_code(user, pyotp.TOTP(plain).now(), secret_key=key)
            assert user.totp_last_step > 0
    finally:
        await test_databases.drop(url)


# Work as 0019 stores it, for the search index 0020 builds over what is already there.
WORK_SEED = """
INSERT INTO agent (id, workspace_id, name, runtime, version, capabilities, status, created_at)
  VALUES ('agt_old', 'ws_old', 'Lighthouse keeper', 'claude', '1', '[]', 'online',
          '2026-01-01 00:00:00+00:00');
INSERT INTO conversation (id, workspace_id, title, agent_ids, created_by, created_at, updated_at)
  VALUES ('conv_old', 'ws_old', 'Old thread', '["agt_old"]', 'user:usr_old',
          '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00');
INSERT INTO message (id, workspace_id, conversation_id, author, content, attachments, created_at)
  VALUES ('msg_old', 'ws_old', 'conv_old', 'agent:agt_old', 'The beacon needs new lenses',
          '[]', '2026-01-01 00:00:00+00:00');
INSERT INTO task (id, workspace_id, title, description, status, summary, error, created_by,
                  cancel_reason, created_at, updated_at)
  VALUES ('task_01OLD', 'ws_old', 'Order lenses', '', 'queued', '', '', 'user:usr_old', '',
          '2026-01-01 00:00:00+00:00', '2026-01-01 00:00:00+00:00');
INSERT INTO interaction (id, workspace_id, task_id, type, status, payload, created_at)
  VALUES ('int_old', 'ws_old', 'task_01OLD', 'approval', 'pending',
          '{"title": "Buy the lenses?", "description": "Three lenses"}',
          '2026-01-01 00:00:00+00:00');
"""


async def test_an_upgraded_hub_finds_its_old_work_and_keeps_indexing(
    tmp_path: Path, test_databases: TestDatabases
) -> None:
    url = await _empty_database(test_databases, tmp_path)
    try:
        await migrate(url, target="models.0019_sealed_totp_secret")
        async with TortoiseContext():
            await Tortoise.init(config=tortoise_config(url))
            await connections.get("default").execute_script(SEED + WORK_SEED)
            await Tortoise.close_connections()
        await migrate(url)
        async with opened(url):
            found = await search("ws_old", "lens")
            assert {(hit.kind, hit.id) for hit in found.items} == {
                ("message", "msg_old"),
                ("task", "task_01OLD"),
                ("card", "int_old"),
            }
            assert [hit.id for hit in (await search("ws_old", "keeper")).items] == ["agt_old"]
            assert [hit.id for hit in (await search("ws_old", "task_01OL")).items] == ["task_01OLD"]
            # A row written at the head of the schema reaches the index too: a migration
            # that remade one of these tables on SQLite would have dropped its triggers.
            await Task.filter(id="task_01OLD").update(title="Order mirrors")
            assert [hit.id for hit in (await search("ws_old", "mirrors")).items] == ["task_01OLD"]
            await Agent.filter(id="agt_old").delete()
            assert (await search("ws_old", "keeper")).items == []
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


def test_a_column_added_to_a_table_with_rows_has_a_database_default() -> None:
    """SQLite and PostgreSQL both refuse a NOT NULL column added to a table that has rows
    unless the column has a default in the database itself: the model's default is the
    ORM's, and a hub upgrading with data in the table would stop at that migration."""
    from tortoise.fields.base import DB_DEFAULT_NOT_SET

    bare = []
    for name in MIGRATIONS:
        module = importlib.import_module(f"hub.core.store.migrations.{name}")
        for operation in module.Migration.operations:
            field = getattr(operation, "field", None)
            if type(operation).__name__ != "AddField" or field is None or field.null:
                continue
            if getattr(field, "db_default", DB_DEFAULT_NOT_SET) is DB_DEFAULT_NOT_SET:
                bare.append(f"{name}: {operation.model_name}.{operation.name}")
    assert bare == [], "give these columns a db_default"
