from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0009_envelope_ids_per_actor')]

    initial = False

    operations = [
        ops.CreateModel(
            name='UserSession',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=40)),
                ('user', fields.ForeignKeyField('models.User', source_field='user_id', db_constraint=True, to_field='id', related_name='sessions', on_delete=OnDelete.CASCADE)),
                ('key_hash', fields.CharField(unique=True, max_length=64)),
                ('user_agent', fields.CharField(null=True, max_length=300)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=True)),
                ('last_seen_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'user_session', 'app': 'models', 'pk_attr': 'id', 'table_description': "A browser's sign-in: the session cookie carries only a random key, whose hash finds"},
            bases=['Model'],
        ),
    ]
