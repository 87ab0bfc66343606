from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0021_search')]

    initial = False

    # The inbox pages a status's rows by time and then id: with the id in the index, its
    # order is the page's, and a page of a week's 40,000 finished tasks reads a page of
    # rows instead of sorting them all (tests/core/store/test_query_plans.py).
    operations = [
        ops.RemoveIndex(
            model_name='Interaction',
            name=None,
            fields=['workspace_id', 'status', 'created_at'],
        ),
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['workspace_id', 'status', 'created_at', 'id']),
        ),
        ops.RemoveIndex(
            model_name='Task',
            name=None,
            fields=['workspace_id', 'status', 'updated_at'],
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'status', 'updated_at', 'id']),
        ),
    ]
