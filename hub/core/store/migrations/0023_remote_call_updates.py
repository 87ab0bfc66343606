from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0022_ordered_status_indexes')]

    initial = False

    operations = [
        ops.AddField(
            model_name='RemoteCall',
            name='last_push_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='RemoteCall',
            name='updates',
            field=fields.CharField(default='', db_default='', max_length=40),
        ),
    ]
