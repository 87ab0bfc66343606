from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from json import dumps, loads
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0003_notifications')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RemoteAgent',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('workspace_id', fields.CharField(max_length=40)),
                ('url', fields.CharField(max_length=2000)),
                ('endpoint_url', fields.CharField(max_length=2000)),
                ('protocol_version', fields.CharField(max_length=20)),
                ('streaming', fields.BooleanField(default=False)),
                ('card', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('pinned', fields.BooleanField(default=False)),
                ('auth_scheme', fields.CharField(default='', max_length=200)),
                ('secret_sealed', fields.TextField(null=True, unique=False)),
                ('unreachable_since', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('last_contact_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'remote_agent', 'app': 'models', 'unique_together': (('workspace_id', 'url'),), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='RemoteCall',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('workspace_id', fields.CharField(max_length=40)),
                ('agent_id', fields.CharField(max_length=40)),
                ('remote_task_id', fields.CharField(null=True, max_length=200)),
                ('context_id', fields.CharField(null=True, max_length=200)),
                ('last_state', fields.CharField(default='', max_length=40)),
                ('interaction_id', fields.CharField(null=True, max_length=40)),
                ('answered_interaction_id', fields.CharField(null=True, max_length=40)),
                ('cancel_sent_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('finished', fields.BooleanField(default=False)),
                ('started_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_contact_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'remote_call', 'app': 'models', 'indexes': [Index(fields=['finished', 'workspace_id'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
    ]
