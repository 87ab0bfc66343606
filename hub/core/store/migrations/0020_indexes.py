from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0019_sealed_totp_secret')]

    initial = False

    # What the pages and lists of a big workspace read by (tests/core/store/test_query_plans.py).
    # The (workspace_id, status) indexes give way to ones that begin with them, so every
    # query the old ones served is served still, at one index's cost on each write.
    operations = [
        ops.AddIndex(
            model_name='Agent',
            index=Index(fields=['workspace_id', 'created_at', 'id']),
        ),
        ops.AddIndex(
            model_name='Artifact',
            index=Index(fields=['workspace_id', 'task_id', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Conversation',
            index=Index(fields=['workspace_id', 'updated_at', 'id']),
        ),
        ops.AddIndex(
            model_name='Event',
            index=Index(fields=['workspace_id', 'task_id', 'sequence']),
        ),
        ops.RemoveIndex(
            model_name='Interaction',
            name=None,
            fields=['workspace_id', 'status'],
        ),
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['workspace_id', 'status', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['workspace_id', 'task_id', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Interaction',
            index=Index(fields=['workspace_id', 'conversation_id', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Message',
            index=Index(fields=['workspace_id', 'conversation_id', 'created_at', 'id']),
        ),
        ops.AddIndex(
            model_name='Message',
            index=Index(fields=['workspace_id', 'task_id', 'created_at']),
        ),
        ops.RemoveIndex(
            model_name='Task',
            name=None,
            fields=['workspace_id', 'status'],
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'created_at', 'id']),
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'status', 'updated_at']),
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'parent_id', 'created_at', 'id']),
        ),
        ops.AddIndex(
            model_name='Task',
            index=Index(fields=['workspace_id', 'conversation_id', 'created_at', 'id']),
        ),
    ]
