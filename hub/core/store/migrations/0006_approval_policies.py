from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from hub.core.store.notification_models import NotificationKind
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0005_delivered_batches')]

    initial = False

    operations = [
        ops.CreateModel(
            name='PolicyRule',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('workspace', fields.ForeignKeyField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='policy_rules', on_delete=OnDelete.CASCADE)),
                ('position', fields.IntField(default=0)),
                ('risk', fields.CharField(null=True, max_length=20)),
                ('agent_id', fields.CharField(null=True, max_length=40)),
                ('card_type', fields.CharField(null=True, max_length=20)),
                ('policy', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_by', fields.CharField(max_length=100)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'policy_rule', 'app': 'models', 'indexes': [Index(fields=['workspace_id', 'position'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='Interaction',
            name='escalated_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='Interaction',
            name='policy',
            field=fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
        ops.AddField(
            model_name='Interaction',
            name='policy_due_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='Interaction',
            name='reminded_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='Interaction',
            name='votes',
            field=fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['status', 'policy_due_at']),
        ),
        ops.AlterField(
            model_name='Notification',
            name='kind',
            field=fields.CharEnumField(description='WAITING: waiting\nFAILED: failed\nDECIDED: decided\nREMINDER: reminder\nUPDATED: updated', enum_type=NotificationKind, max_length=20),
        ),
    ]
