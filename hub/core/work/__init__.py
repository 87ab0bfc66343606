"""The work people and agents share: tasks (and their children as a tree), conversations,
interaction cards and their answers (one by one or in a batch), the inbox, the wire views,
what people may see of sensitive answers, and the projection of every event.
"""

from __future__ import annotations

from hub.core.work.batch_answers import (
    APPROVE,
    MAX_BATCH_ITEMS,
    REJECT,
    BatchItem,
    Outcome,
    answer_for,
    batchable,
    batchable_cards,
    respond_to_batch,
)
from hub.core.work.conversations import (
    MAX_AGENTS_PER_CONVERSATION,
    MAX_TITLE_LENGTH,
    create_conversation,
    get_conversation,
    list_conversations,
)
from hub.core.work.inbox import DEFAULT_LIMIT
from hub.core.work.interactions import (
    display_names,
    get_interaction,
    interaction_detail,
    list_interactions,
    respond_to_interaction,
    responder_names,
)
from hub.core.work.messages import MAX_CONTENT_LENGTH, list_messages, post_message
from hub.core.work.sensitive_answers import (
    answer_for_people,
    envelopes_for_people,
    people_feed,
    published_for_people,
)
from hub.core.work.task_tree import TaskNode, child_tree, task_tree
from hub.core.work.tasks import (
    MAX_DESCRIPTION_LENGTH,
    MAX_REASON_LENGTH,
    create_task,
    get_task,
    list_tasks,
    request_cancel,
    statuses_for,
    task_detail,
)
from hub.core.work.views import (
    conversation_view,
    effective_interaction_status,
    message_view,
    task_view,
)

__all__ = [
    "APPROVE",
    "DEFAULT_LIMIT",
    "MAX_AGENTS_PER_CONVERSATION",
    "MAX_BATCH_ITEMS",
    "MAX_CONTENT_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_REASON_LENGTH",
    "MAX_TITLE_LENGTH",
    "REJECT",
    "BatchItem",
    "Outcome",
    "TaskNode",
    "answer_for",
    "answer_for_people",
    "batchable",
    "batchable_cards",
    "child_tree",
    "conversation_view",
    "create_conversation",
    "create_task",
    "display_names",
    "effective_interaction_status",
    "envelopes_for_people",
    "get_conversation",
    "get_interaction",
    "get_task",
    "interaction_detail",
    "list_conversations",
    "list_interactions",
    "list_messages",
    "list_tasks",
    "message_view",
    "people_feed",
    "post_message",
    "published_for_people",
    "request_cancel",
    "respond_to_batch",
    "respond_to_interaction",
    "responder_names",
    "statuses_for",
    "task_detail",
    "task_tree",
    "task_view",
]
