from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0010_sessions')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ApprovalSettings',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('workspace', fields.OneToOneField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='approval_settings', on_delete=OnDelete.CASCADE)),
                ('approve_on_expiry', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('updated_by', fields.CharField(max_length=100)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'approval_settings', 'app': 'models', 'pk_attr': 'id', 'table_description': 'Limits on what the policies of a workspace may decide by themselves.'},
            bases=['Model'],
        ),
    ]
