from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0013_coding_agent_rules')]

    initial = False

    operations = [
        ops.CreateModel(
            name='PushSubscription',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='push_subscriptions', on_delete=OnDelete.CASCADE)),
                ('endpoint', fields.CharField(unique=True, max_length=2000)),
                ('p256dh', fields.CharField(max_length=200)),
                ('auth', fields.CharField(max_length=100)),
                ('device', fields.CharField(default='', max_length=200)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('last_sent_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'push_subscription', 'app': 'models', 'pk_attr': 'id', 'table_description': "One browser's Web Push subscription: its push service's endpoint, and its keys."},
            bases=['Model'],
        ),
    ]
