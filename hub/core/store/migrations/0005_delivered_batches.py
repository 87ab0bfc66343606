from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0004_remote_agents')]

    initial = False

    operations = [
        ops.CreateModel(
            name='DeliveredBatch',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=16)),
                ('surface', fields.CharField(max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='delivered_batches', on_delete=OnDelete.CASCADE)),
                ('workspace_id', fields.CharField(max_length=40)),
                ('task_id', fields.CharField(max_length=40)),
                ('interaction_ids', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('address', fields.CharField(default='', max_length=200)),
                ('external_id', fields.CharField(default='', max_length=200)),
                ('state', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'delivered_batch', 'app': 'models', 'indexes': [Index(fields=['surface', 'user_id', 'task_id'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
    ]
