from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0012_interaction_withdrawals')]

    initial = False

    operations = [
        ops.CreateModel(
            name='CodingAgentRules',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('workspace', fields.OneToOneField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='coding_agent_rules', on_delete=OnDelete.CASCADE)),
                ('deny', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('updated_by', fields.CharField(max_length=100)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'coding_agent_rules', 'app': 'models', 'pk_attr': 'id', 'table_description': "The tool calls the workspace's coding agents may never make, whoever would approve."},
            bases=['Model'],
        ),
    ]
