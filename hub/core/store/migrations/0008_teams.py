from tortoise import migrations
from tortoise.migrations import operations as ops
from hub.core.store.models import Role
from hub.core.store.notification_models import NotificationKind
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0007_remote_call_lease')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Invitation',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('workspace', fields.ForeignKeyField('models.Workspace', source_field='workspace_id', db_constraint=True, to_field='id', related_name='invitations', on_delete=OnDelete.CASCADE)),
                ('role', fields.CharEnumField(default=Role.MEMBER, description='OWNER: owner\nMEMBER: member\nVIEWER: viewer', enum_type=Role, max_length=20)),
                ('email', fields.CharField(null=True, max_length=320)),
                ('invited_by', fields.ForeignKeyField('models.User', source_field='invited_by_id', null=True, db_constraint=True, to_field='id', related_name='invitations_sent', on_delete=OnDelete.SET_NULL)),
                ('token_hash', fields.CharField(unique=True, max_length=64)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('accepted_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('accepted_by_id', fields.CharField(null=True, max_length=40)),
                ('revoked_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'invitation', 'app': 'models', 'pk_attr': 'id', 'table_description': "An owner's offer to join a workspace with a role: one use, until ``expires_at``."},
            bases=['Model'],
        ),
        ops.AlterField(
            model_name='Notification',
            name='kind',
            field=fields.CharEnumField(description='WAITING: waiting\nFAILED: failed\nDECIDED: decided\nINVITED: invited\nREMINDER: reminder\nUPDATED: updated', enum_type=NotificationKind, max_length=20),
        ),
        ops.AlterField(
            model_name='Notification',
            name='user',
            field=fields.ForeignKeyField('models.User', source_field='user_id', null=True, db_constraint=True, to_field='id', related_name='notifications', on_delete=OnDelete.CASCADE),
        ),
        ops.AddField(
            model_name='Notification',
            name='invitation_id',
            field=fields.CharField(null=True, max_length=40),
        ),
    ]
