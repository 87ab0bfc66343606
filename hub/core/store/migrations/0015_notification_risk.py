from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0014_push_subscriptions')]

    initial = False

    operations = [
        ops.AddField(
            model_name='NotificationSettings',
            name='high_risk_in_quiet_hours',
            field=fields.BooleanField(default=False, db_default=False),
        ),
        ops.AddField(
            model_name='NotificationSettings',
            name='only_high_risk',
            field=fields.BooleanField(default=False, db_default=False),
        ),
    ]
