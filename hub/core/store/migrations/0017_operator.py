from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0016_presence_and_delivery')]

    initial = False

    operations = [
        ops.AddField(
            model_name='User',
            name='disabled_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='User',
            name='is_admin',
            field=fields.BooleanField(default=False, db_default=False),
        ),
        # db_default: SQLite adds a NOT NULL column to a table with rows only with a default.
        # A hub made before there were admins gets one here, once for all its processes: its
        # oldest account, the one that set it up. Done at start instead, it would run on
        # every start and race between processes sharing the database.
        ops.RunSQL(
            "UPDATE user_account SET is_admin = TRUE WHERE id = "
            "(SELECT id FROM user_account ORDER BY created_at, id LIMIT 1)",
            reverse_sql="",
        ),
    ]
