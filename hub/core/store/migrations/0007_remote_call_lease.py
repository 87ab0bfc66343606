from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0006_approval_policies')]

    initial = False

    operations = [
        ops.AddField(
            model_name='RemoteCall',
            name='lease_expires_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='RemoteCall',
            name='owner',
            field=fields.CharField(null=True, max_length=100),
        ),
    ]
