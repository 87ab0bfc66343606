from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0015_notification_risk')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Agent',
            name='session_id',
            field=fields.CharField(null=True, max_length=40),
        ),
        ops.AddField(
            model_name='Interaction',
            name='delivered_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
    ]
