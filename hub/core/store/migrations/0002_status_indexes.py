from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0001_initial')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['workspace_id', 'status']),
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'status']),
        ),
    ]
