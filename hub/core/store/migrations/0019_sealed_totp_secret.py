from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0018_two_factor')]

    initial = False

    # The column keeps its rows: a migration does not know the hub's secret key, so the
    # secrets 0018 stored in the clear are sealed where it is known, as the hub starts
    # (hub.core.people.two_factor.seal_plain_secrets), before it serves a request.
    operations = [
        ops.RenameField(model_name='User', old_name='totp_secret', new_name='totp_secret_sealed'),
        ops.AlterField(
            model_name='User',
            name='totp_secret_sealed',
            field=fields.CharField(null=True, max_length=255),
        ),
    ]
