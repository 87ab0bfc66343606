from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from hub.core.store.notification_models import NotificationKind, NotificationStatus
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0002_status_indexes')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ChannelAccount',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='channel_accounts', on_delete=OnDelete.CASCADE)),
                ('surface', fields.CharField(max_length=40)),
                ('external_id', fields.CharField(max_length=100)),
                ('address', fields.CharField(max_length=200)),
                ('display_name', fields.CharField(default='', max_length=200)),
                ('linked_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'channel_account', 'app': 'models', 'unique_together': (('surface', 'external_id'), ('user', 'surface')), 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ChannelLinkToken',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='channel_link_tokens', on_delete=OnDelete.CASCADE)),
                ('surface', fields.CharField(max_length=40)),
                ('token_hash', fields.CharField(unique=True, max_length=64)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('used_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'channel_link_token', 'app': 'models', 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='DeliveredCard',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=16)),
                ('surface', fields.CharField(max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='delivered_cards', on_delete=OnDelete.CASCADE)),
                ('workspace_id', fields.CharField(max_length=40)),
                ('interaction_id', fields.CharField(max_length=40)),
                ('address', fields.CharField(default='', max_length=200)),
                ('external_id', fields.CharField(default='', max_length=200)),
                ('state', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'delivered_card', 'app': 'models', 'unique_together': (('surface', 'user', 'interaction_id'),), 'indexes': [Index(fields=['surface', 'address', 'external_id'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='Notification',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('workspace', fields.ForeignKeyField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='notifications', on_delete=OnDelete.CASCADE)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='notifications', on_delete=OnDelete.CASCADE)),
                ('surface', fields.CharField(max_length=40)),
                ('kind', fields.CharEnumField(description='WAITING: waiting\nFAILED: failed\nDECIDED: decided', enum_type=NotificationKind, max_length=20)),
                ('interaction_id', fields.CharField(null=True, max_length=40)),
                ('task_id', fields.CharField(null=True, max_length=40)),
                ('event_sequence', fields.BigIntField()),
                ('dedupe_key', fields.CharField(unique=True, max_length=200)),
                ('status', fields.CharEnumField(default=NotificationStatus.PENDING, description='PENDING: pending\nSENT: sent\nSKIPPED: skipped\nFAILED: failed', enum_type=NotificationStatus, max_length=20)),
                ('attempts', fields.IntField(default=0)),
                ('next_attempt_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('claimed_until', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('last_error', fields.TextField(default='', unique=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('sent_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'notification', 'app': 'models', 'indexes': [Index(fields=['status', 'next_attempt_at'])], 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='NotificationSettings',
            fields=[
                ('id', fields.IntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('user', fields.OneToOneField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='notification_settings', on_delete=OnDelete.CASCADE)),
                ('surfaces', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('quiet_start', fields.CharField(null=True, max_length=5)),
                ('quiet_end', fields.CharField(null=True, max_length=5)),
                ('timezone', fields.CharField(default='UTC', max_length=64)),
                ('language', fields.CharField(default='en', max_length=16)),
                ('updated_at', fields.DatetimeField(auto_now=True, auto_now_add=False)),
            ],
            options={'table': 'notification_settings', 'app': 'models', 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='UsedLink',
            fields=[
                ('nonce', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user_id', fields.CharField(max_length=40)),
                ('interaction_id', fields.CharField(max_length=40)),
                ('used_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'used_link', 'app': 'models', 'pk_attr': 'nonce'},
            bases=['Model'],
        ),
    ]
