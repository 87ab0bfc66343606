from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0017_operator')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RecoveryCode',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='recovery_codes', on_delete=OnDelete.CASCADE)),
                ('code_hash', fields.CharField(max_length=64)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
            ],
            options={'table': 'totp_recovery_code', 'app': 'models', 'unique_together': (('user', 'code_hash'),), 'pk_attr': 'id', 'table_description': "One of a person's single-use codes for signing in without their authenticator."},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='User',
            name='totp_last_step',
            field=fields.BigIntField(default=0, db_default=0),
        ),
        ops.AddField(
            model_name='User',
            name='totp_secret',
            field=fields.CharField(null=True, max_length=64),
        ),
    ]
