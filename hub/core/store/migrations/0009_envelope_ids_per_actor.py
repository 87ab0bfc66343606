from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.migrations.constraints import UniqueConstraint


# The event table as 0001 made it, less its (workspace, id) clause; AddConstraint below
# then adds (workspace, actor, id) as a unique index.
_EVENT_COLUMNS = (
    '"pk_id", "sequence", "id", "type", "actor", "conversation_id", "task_id", '
    '"correlation_id", "recipient_agent_id", "payload", "occurred_at", "recorded_at", '
    '"workspace_id"'
)
_REMAKE_EVENT_SQLITE = [
    'CREATE TABLE "new__event" ('
    '"pk_id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "sequence" BIGINT NOT NULL, '
    '"id" VARCHAR(100) NOT NULL, "type" VARCHAR(100) NOT NULL, "actor" VARCHAR(100) NOT NULL, '
    '"conversation_id" VARCHAR(40), "task_id" VARCHAR(40), "correlation_id" VARCHAR(100), '
    '"recipient_agent_id" VARCHAR(40), "payload" JSON NOT NULL, '
    '"occurred_at" TIMESTAMP NOT NULL, "recorded_at" TIMESTAMP NOT NULL, '
    '"workspace_id" VARCHAR(40) NOT NULL REFERENCES "workspace" ("id") ON DELETE CASCADE, '
    'CONSTRAINT "uid_event_workspa_278ad0" UNIQUE ("workspace_id", "sequence"))',
    f'INSERT INTO "new__event" ({_EVENT_COLUMNS}) SELECT {_EVENT_COLUMNS} FROM "event"',
    'DROP TABLE "event"',
    'ALTER TABLE "new__event" RENAME TO "event"',
    'CREATE INDEX "idx_event_workspa_dedf8b" ON "event" '
    '("workspace_id", "recipient_agent_id", "sequence")',
]


class RemoveTableConstraint(ops.RemoveConstraint):
    """Tortoise drops a unique constraint on SQLite as an index, but the table's own
    UNIQUE clause (how 0001 made it) is not one: SQLite drops it only by remaking the
    table, and Tortoise's own remake leaves out the table's other constraints and
    indexes. So the event table is remade here as SQLite's documentation describes."""

    async def database_forward(self, app_label, old_state, new_state, state_editor=None):  # type: ignore[no-untyped-def]
        if state_editor is not None and state_editor.DIALECT == "sqlite":
            for statement in _REMAKE_EVENT_SQLITE:
                await state_editor.client.execute_query(statement)
            return
        await super().database_forward(app_label, old_state, new_state, state_editor)


class Migration(migrations.Migration):
    dependencies = [("models", "0008_teams")]

    initial = False

    # Envelope ids become the actor's own: unique per (workspace, actor, id).
    operations = [
        RemoveTableConstraint(
            model_name="Event",
            name=None,
            fields=["workspace", "id"],
        ),
        ops.AddConstraint(
            model_name="Event",
            constraint=UniqueConstraint(fields=("workspace", "actor", "id"), name=None),
        ),
    ]
