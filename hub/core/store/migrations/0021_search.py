"""The search index of a workspace's tasks, messages, cards and agents (hub.core.work.search).

The index is kept by the database itself, not by the projection's handlers: every way a row
is written (the projection, its bulk inserts, a rebuild from the log, an agent renamed, a
workspace deleted with its rows) reaches it, and a handler added later cannot forget it.

* SQLite: an FTS5 table over ``search_document``, one row per searchable row, kept by
  triggers on the four tables. FTS5's own external content would read the source tables by
  rowid, but theirs are not stable: a table keyed by text has an implicit rowid that VACUUM
  may renumber, which would point the index at other rows. ``search_document`` owns its
  integer keys instead. A later migration that remakes one of these tables on SQLite drops
  its triggers with it and must create them again (``tests/core/store/test_migrations.py``
  checks a head database finds a row written after migrating).
* PostgreSQL: a generated ``tsvector`` column on each table with a GIN index. Agents'
  names are also matched by any part (``ILIKE``), with a trigram index where the server has
  ``pg_trgm``; without it, that match reads the workspace's agents, which are few.

Both split text into words at ASCII punctuation and spaces, as the query is split, so an id
like ``task_01JD…`` is the words ``task`` and ``01jd…`` and a prefix of it finds it. Rows
already there are indexed here: a hub upgrading finds its old work.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops

# What each table contributes: (table, kind, title, body, the columns those are made of).
_SOURCES = (
    ("task", "task", "{r}.title", "{r}.description || ' ' || {r}.summary",
     ("title", "description", "summary")),
    ("message", "message", "''", "{r}.content", ("content",)),
    ("interaction", "card", "coalesce(json_extract({r}.payload, '$.title'), '')",
     "coalesce(json_extract({r}.payload, '$.description'), '')", ("payload",)),
    ("agent", "agent", "{r}.name", "{r}.runtime", ("name", "runtime")),
)


def _sqlite() -> list[str]:
    statements = [
        "CREATE TABLE search_document ("
        " entry INTEGER PRIMARY KEY,"
        " ident VARCHAR(40) NOT NULL UNIQUE,"
        " kind VARCHAR(10) NOT NULL,"
        " workspace_id VARCHAR(40) NOT NULL,"
        " title TEXT NOT NULL,"
        " body TEXT NOT NULL)",
        "CREATE VIRTUAL TABLE search_text USING fts5(ident, title, body,"
        " content='search_document', content_rowid='entry',"
        " tokenize='unicode61 remove_diacritics 2')",
        "CREATE TRIGGER search_document_added AFTER INSERT ON search_document BEGIN"
        " INSERT INTO search_text(rowid, ident, title, body)"
        " VALUES (new.entry, new.ident, new.title, new.body); END",
        "CREATE TRIGGER search_document_removed AFTER DELETE ON search_document BEGIN"
        " INSERT INTO search_text(search_text, rowid, ident, title, body)"
        " VALUES ('delete', old.entry, old.ident, old.title, old.body); END",
        "CREATE TRIGGER search_document_changed AFTER UPDATE ON search_document BEGIN"
        " INSERT INTO search_text(search_text, rowid, ident, title, body)"
        " VALUES ('delete', old.entry, old.ident, old.title, old.body);"
        " INSERT INTO search_text(rowid, ident, title, body)"
        " VALUES (new.entry, new.ident, new.title, new.body); END",
    ]
    for table, kind, title, body, columns in _SOURCES:
        new_title, new_body = title.format(r="new"), body.format(r="new")
        # A task is saved whole at every step of its progress: only a change of what is
        # indexed rewrites its entry.
        changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in columns)
        statements += [
            f"CREATE TRIGGER {table}_search_added AFTER INSERT ON {table} BEGIN"
            " INSERT INTO search_document(ident, kind, workspace_id, title, body)"
            f" VALUES (new.id, '{kind}', new.workspace_id, {new_title}, {new_body}); END",
            f"CREATE TRIGGER {table}_search_changed AFTER UPDATE ON {table} WHEN {changed}"
            f" BEGIN UPDATE search_document SET title = {new_title}, body = {new_body}"
            " WHERE ident = new.id; END",
            f"CREATE TRIGGER {table}_search_removed AFTER DELETE ON {table} BEGIN"
            " DELETE FROM search_document WHERE ident = old.id; END",
            "INSERT INTO search_document(ident, kind, workspace_id, title, body)"
            f" SELECT r.id, '{kind}', r.workspace_id, {title.format(r='r')},"
            f" {body.format(r='r')} FROM {table} AS r",
        ]
    return statements


def _words(expression: str) -> str:
    """PostgreSQL's parser keeps ``deploy.example.com`` or ``task_01JD`` as one token; the
    query is split at punctuation, so the text is split the same way first."""
    return f"to_tsvector('simple', regexp_replace({expression}, '[[:punct:][:space:]]+', ' ', 'g'))"


def _vector(*weighted: tuple[str, str]) -> str:
    return " || ".join(f"setweight({_words(expression)}, '{weight}')" for expression, weight in weighted)


# Weight A: what names the row (its id, title, name); B: the rest of its text.
_POSTGRES_VECTORS = {
    "task": _vector(("id", "A"), ("title", "A"), ("description || ' ' || summary", "B")),
    "message": _vector(("id", "A"), ("content", "B")),
    "interaction": _vector(
        ("id", "A"),
        ("coalesce(payload->>'title', '')", "A"),
        ("coalesce(payload->>'description', '')", "B"),
    ),
    "agent": _vector(("id", "A"), ("name", "A"), ("runtime", "B")),
}


def _postgres() -> list[str]:
    statements = []
    for table, vector in _POSTGRES_VECTORS.items():
        statements += [
            f"ALTER TABLE {table} ADD COLUMN search_vector tsvector"
            f" GENERATED ALWAYS AS ({vector}) STORED",
            f"CREATE INDEX {table}_search ON {table} USING gin (search_vector)",
        ]
    # A server without the extension (or a role that may not create it) still migrates.
    statements += [
        "DO $$ BEGIN CREATE EXTENSION IF NOT EXISTS pg_trgm;"
        " EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'pg_trgm is not available: agent names"
        " are matched by any part without a trigram index'; END $$",
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN"
        " CREATE INDEX agent_name_trigrams ON agent USING gin (name gin_trgm_ops);"
        " END IF; END $$",
    ]
    return statements


_SQLITE_REVERSE = [
    *(f"DROP TRIGGER {t}_search_{e}" for t, *_ in _SOURCES for e in ("added", "changed", "removed")),
    "DROP TABLE search_text",
    "DROP TABLE search_document",
]
_POSTGRES_REVERSE = [
    "DROP INDEX IF EXISTS agent_name_trigrams",
    *(f"ALTER TABLE {table} DROP COLUMN search_vector" for table in _POSTGRES_VECTORS),
]


class SearchIndex(ops.RunSQL):
    """The statements of the database the hub runs on."""

    def __init__(self) -> None:
        super().__init__(_sqlite(), reverse_sql=_SQLITE_REVERSE)

    def _statements(self, state_editor, forward):  # type: ignore[no-untyped-def]
        if state_editor.DIALECT == "sqlite":
            return _sqlite() if forward else _SQLITE_REVERSE
        return _postgres() if forward else _POSTGRES_REVERSE

    async def database_forward(self, app_label, old_state, new_state, state_editor=None):  # type: ignore[no-untyped-def]
        if state_editor is not None:
            for statement in self._statements(state_editor, forward=True):
                await state_editor.client.execute_query(statement)

    async def database_backward(self, app_label, old_state, new_state, state_editor=None):  # type: ignore[no-untyped-def]
        if state_editor is not None:
            for statement in self._statements(state_editor, forward=False):
                await state_editor.client.execute_query(statement)


class Migration(migrations.Migration):
    dependencies = [('models', '0020_indexes')]

    initial = False

    operations = [SearchIndex()]
