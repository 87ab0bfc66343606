"""A backup of the hub as one file, and putting it back (``lineup backup`` / ``restore``).

The archive (a gzipped tar, mode 0600: it holds keys) carries everything a hub needs to be
the same hub again:

* the database: SQLite copied through its online backup API, which reads a consistent
  snapshot while the hub keeps serving; PostgreSQL dumped by ``pg_dump`` (custom format);
* the secret key, without which sessions, signed links and the hashes of short codes made
  with it are worthless;
* the VAPID key pair, without which every browser's push subscription is dead;
* a manifest naming the hub version and the last migration the database had.

Restoring refuses an archive of another version or migration level: the schema in it is
not the one this code reads, and guessing would corrupt it. After restoring, every
workspace's log starts a new epoch: the restored log ends below what agents and browsers
have seen, and they must resync rather than skip the events that will reuse those numbers.
The hub must be stopped while restoring.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from contextlib import closing
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from hub.config import Settings
from hub.core.errors import HubError
from hub.core.log.events import start_new_epochs
from hub.core.store import migrations
from hub.core.store.database import database, sqlite_path

FORMAT = 1
MANIFEST = "manifest.json"
SQLITE_MEMBER = "database.sqlite3"
POSTGRES_MEMBER = "database.pgdump"
SECRET_KEY_MEMBER = "secret_key"
# Where hub.channels.push.keys keeps the VAPID pair; the host may not import a channel.
VAPID_FILE = "vapid_private.pem"
_LAST_MIGRATION = "SELECT name FROM tortoise_migrations WHERE app = 'models' ORDER BY name DESC"


class BackupError(HubError):
    code = "backup_failed"
    hint = "Check the message above; the data in the hub was not changed."


class BackupMismatch(HubError):
    """The archive was made by another version of the hub, or at another migration."""

    code = "backup_version_mismatch"
    hint = (
        "Restore it with the hub version it names, then upgrade that hub as docs/deploy.md "
        "says; or restore a backup this version made."
    )


@dataclass(frozen=True)
class Manifest:
    hub_version: str
    migration: str
    database: str  # "sqlite" or "postgres"

    def to_json(self) -> bytes:
        body = {
            "format": FORMAT,
            "hubVersion": self.hub_version,
            "migration": self.migration,
            "database": self.database,
        }
        return json.dumps(body, indent=2).encode()

    @classmethod
    def from_json(cls, text: bytes) -> Manifest:
        body = json.loads(text)
        if body.get("format") != FORMAT:
            raise BackupError(f"This archive's format is {body.get('format')!r}, not {FORMAT}.")
        return cls(body["hubVersion"], body["migration"], body["database"])


def hub_version() -> str:
    return version("lineup-hub")


def code_migration() -> str:
    """The newest migration this code ships: the level its database must be at."""
    names = (p.stem for p in Path(migrations.__file__).parent.glob("[0-9][0-9][0-9][0-9]_*.py"))
    return max(names)


async def backup(settings: Settings, target: Path) -> Manifest:
    """Write the whole hub into ``target`` and return what its manifest says."""
    url = settings.resolved_database_url
    with tempfile.TemporaryDirectory(prefix="lineup-backup-") as scratch:
        if settings.is_postgres:
            dump = Path(scratch) / POSTGRES_MEMBER
            migration = await _postgres_migration(url)
            await asyncio.to_thread(_pg_dump, url, dump)
        else:
            dump = Path(scratch) / SQLITE_MEMBER
            migration = await asyncio.to_thread(_sqlite_copy, _sqlite_file(url), dump)
        manifest = Manifest(
            hub_version(), migration, "postgres" if settings.is_postgres else "sqlite"
        )
        await asyncio.to_thread(_write_archive, target, manifest, dump, settings)
    return manifest


async def restore(settings: Settings, source: Path) -> tuple[Manifest, int]:
    """Put the archive back into the configured database and data directory; returns its
    manifest and how many workspaces started a new epoch."""
    with tempfile.TemporaryDirectory(prefix="lineup-restore-") as scratch:
        manifest = await asyncio.to_thread(_unpack, source, Path(scratch))
        expected = Manifest(hub_version(), code_migration(), manifest.database)
        if (manifest.hub_version, manifest.migration) != (
            expected.hub_version,
            expected.migration,
        ):
            raise BackupMismatch(
                f"This backup was made by LineUp Hub {manifest.hub_version} (migration "
                f"{manifest.migration}); this is {expected.hub_version} ({expected.migration})."
            )
        wanted = "postgres" if settings.is_postgres else "sqlite"
        if manifest.database != wanted:
            raise BackupError(
                f"This backup holds a {manifest.database} database; the hub is set up for "
                f"{wanted} (LINEUP_DATABASE_URL)."
            )
        url = settings.resolved_database_url
        if settings.is_postgres:
            await asyncio.to_thread(_pg_restore, url, Path(scratch) / POSTGRES_MEMBER)
        else:
            await asyncio.to_thread(_sqlite_restore, Path(scratch) / SQLITE_MEMBER, url)
        _put_keys_back(Path(scratch), settings.data_dir)
    async with database(url):
        epochs = await start_new_epochs()
    return manifest, epochs


def _sqlite_file(url: str) -> Path:
    path = sqlite_path(url)
    if path is None or not path.exists():
        raise BackupError(f"There is no SQLite database at {path}.")
    return path


# sqlite3's connection as a context manager commits but never closes: hence closing().
def _sqlite_copy(source: Path, target: Path) -> str:
    with (
        closing(sqlite3.connect(source)) as live,
        closing(sqlite3.connect(target)) as copy,
    ):
        live.backup(copy)
        row = copy.execute(_LAST_MIGRATION).fetchone()
    return str(row[0])


def _sqlite_restore(source: Path, url: str) -> None:
    path = sqlite_path(url)
    if path is None:
        raise BackupError("LINEUP_DATABASE_URL names no SQLite file to restore into.")
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        closing(sqlite3.connect(source)) as saved,
        closing(sqlite3.connect(path)) as live,
    ):
        saved.backup(live)


async def _postgres_migration(url: str) -> str:
    connection = await asyncpg.connect(_libpq_url(url))
    try:
        return str(await connection.fetchval(_LAST_MIGRATION))
    finally:
        await connection.close()


def _libpq_url(url: str) -> str:
    """The URL as libpq and asyncpg read it: without the ORM's query options."""
    url = url.replace("postgres://", "postgresql://", 1)
    return urlunsplit(urlsplit(url)._replace(query=""))


def postgres_tool(name: str) -> str:
    """``pg_dump`` or ``pg_restore`` on PATH, else the newest server's own."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: [int(n) for n in re.findall(r"\d+", p.parts[-3])],
    )
    if not versions:
        raise BackupError(
            f"{name} was not found.",
            hint=f"Install the PostgreSQL client tools (Debian: postgresql-client) so {name} "
            "is on PATH, in the major version of the server or newer.",
        )
    return str(versions[-1])


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupError(f"{Path(argv[0]).name} failed: {done.stderr.strip()[-2000:]}")


def _pg_dump(url: str, target: Path) -> None:
    _run([postgres_tool("pg_dump"), "--format=custom", f"--file={target}", _libpq_url(url)])


def _pg_restore(url: str, dump: Path) -> None:
    _run(
        [
            postgres_tool("pg_restore"),
            "--clean",
            "--if-exists",
            "--no-owner",
            "--no-privileges",
            "--single-transaction",
            f"--dbname={_libpq_url(url)}",
            str(dump),
        ]
    )


def _write_archive(target: Path, manifest: Manifest, dump: Path, settings: Settings) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle, tarfile.open(fileobj=handle, mode="w:gz") as archive:
        _add_bytes(archive, MANIFEST, manifest.to_json())
        archive.add(dump, arcname=dump.name)
        _add_bytes(archive, SECRET_KEY_MEMBER, (settings.secret_key + "\n").encode())
        vapid = settings.data_dir / VAPID_FILE
        if vapid.exists():
            archive.add(vapid, arcname=VAPID_FILE)
    partial.replace(target)  # a backup cut short never passes for a whole one


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o600
    archive.addfile(info, io.BytesIO(data))


def _unpack(source: Path, into: Path) -> Manifest:
    known = {MANIFEST, SQLITE_MEMBER, POSTGRES_MEMBER, SECRET_KEY_MEMBER, VAPID_FILE}
    try:
        with tarfile.open(source, mode="r:gz") as archive:
            members = [m for m in archive.getmembers() if m.name in known and m.isfile()]
            archive.extractall(into, members=members, filter="data")
    except (OSError, tarfile.TarError) as error:
        raise BackupError(f"{source} is not a LineUp Hub backup: {error}") from None
    if not (into / MANIFEST).exists():
        raise BackupError(f"{source} is not a LineUp Hub backup: it has no {MANIFEST}.")
    return Manifest.from_json((into / MANIFEST).read_bytes())


def _put_keys_back(unpacked: Path, data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in (SECRET_KEY_MEMBER, VAPID_FILE):
        if (unpacked / name).exists():
            target = data_dir / name
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write((unpacked / name).read_bytes())
