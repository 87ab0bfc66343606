"""The inbox's counts, kept by the projection (hub.core.work.inbox_counts), filled in here
for the cards and tasks a hub already holds.

The rules are written out again below, as they stand at this migration: a migration must
go on doing what it did when later code changes. What this fills in:

* each pending card's ``waiting_on`` (the approvers its policy names who have not voted,
  or NULL when it names nobody) and ``voted_by`` (everyone who voted);
* ``inbox_count``: the pending cards (``open``; ``anyone`` and per person ``voted`` for
  those that name nobody; per person ``named``), the running tasks per agent, and the
  failed and finished tasks of the last eight days, by day. Older days are not counted:
  no inbox reads them.
"""

import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

DAYS = 8


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def _moment(value):
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def _joined(ids):
    return f" {' '.join(ids)} " if ids else ""


async def _fill_in(apps, schema_editor) -> None:
    client = schema_editor.client
    postgres = client.capabilities.dialect == "postgres"

    def marks(count, start=1):
        return [f"${n}" for n in range(start, start + count)] if postgres else ["?"] * count

    counts = defaultdict(int)

    def add(workspace, figure, delta, agent, person="", day=""):
        counts[workspace, figure, person, "", day] += delta
        if agent:
            counts[workspace, figure, person, agent, day] += delta

    _, cards = await client.execute_query(
        "SELECT id, workspace_id, agent_id, policy, votes FROM interaction "
        "WHERE status = 'pending'"
    )
    for card in cards:
        workspace, agent = card["workspace_id"], card["agent_id"]
        approvers = [str(a) for a in (_json(card["policy"]) or {}).get("approvers") or []]
        voters = []
        for vote in _json(card["votes"]) or []:
            voter = str(vote.get("actor", "")).partition(":")[2]
            if voter and voter not in voters:
                voters.append(voter)
        waiting = [a for a in approvers if a not in voters] if approvers else None
        add(workspace, "open", 1, agent)
        if waiting is None:
            add(workspace, "anyone", 1, agent)
            for voter in voters:
                add(workspace, "voted", 1, agent, person=voter)
        else:
            for person in waiting:
                add(workspace, "named", 1, agent, person=person)
        a, b, c = marks(3)
        await client.execute_query(
            f"UPDATE interaction SET waiting_on = {a}, voted_by = {b} WHERE id = {c}",
            [None if waiting is None else _joined(waiting), _joined(voters), card["id"]],
        )

    since = datetime.now(UTC) - timedelta(days=DAYS)
    a, b = marks(2)
    _, tasks = await client.execute_query(
        "SELECT workspace_id, status, parent_id, target_agent_id, updated_at FROM task "
        f"WHERE status = 'running' OR (status IN ('failed', 'succeeded', 'cancelled') "
        f"AND updated_at >= {a})",
        [since if postgres else since.isoformat(sep=" ")],
    )
    for task in tasks:
        workspace, agent, status = task["workspace_id"], task["target_agent_id"], task["status"]
        if status == "running":
            add(workspace, "running", 1, agent)
            continue
        day = _moment(task["updated_at"]).astimezone(UTC).date().isoformat()
        if status == "failed":
            add(workspace, "failed", 1, agent, day=day)
        elif task["parent_id"] is None:
            add(workspace, "done", 1, agent, day=day)

    rows = [(*key, n) for key, n in counts.items() if n]
    for start in range(0, len(rows), 500):
        chunk = rows[start : start + 500]
        values = ", ".join(
            "(" + ", ".join(marks(6, 6 * n + 1)) + ")" for n in range(len(chunk))
        )
        await client.execute_query(
            "INSERT INTO inbox_count (workspace_id, figure, person, agent_id, day, n) "
            f"VALUES {values}",
            [value for row in chunk for value in row],
        )


class Migration(migrations.Migration):
    dependencies = [('models', '0023_remote_call_updates')]

    initial = False

    operations = [
        ops.CreateModel(
            name='InboxCount',
            fields=[
                ('pk_id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('workspace', fields.ForeignKeyField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='inbox_counts', on_delete=OnDelete.CASCADE)),
                ('figure', fields.CharField(max_length=20)),
                ('person', fields.CharField(default='', max_length=40)),
                ('agent_id', fields.CharField(default='', max_length=40)),
                ('day', fields.CharField(default='', max_length=10)),
                ('n', fields.BigIntField(default=0)),
            ],
            options={'table': 'inbox_count', 'app': 'models', 'unique_together': (('workspace', 'figure', 'person', 'agent_id', 'day'),), 'pk_attr': 'pk_id', 'table_description': "One of the figures the inbox and every page's badge show, kept by the projection in"},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Interaction',
            name='voted_by',
            field=fields.TextField(default='', db_default='', unique=False),
        ),
        ops.AddField(
            model_name='Interaction',
            name='waiting_on',
            field=fields.TextField(null=True, unique=False),
        ),
        ops.RunPython(_fill_in, ops.RunPython.noop),
        # Presence asks whether an agent has open work as it comes and goes.
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['target_agent_id', 'status']),
        ),
    ]
