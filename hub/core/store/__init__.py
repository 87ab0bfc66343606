"""Where everything is kept: the tables, opening the database and migrating it, what a
storage failure means to a person, and claiming due rows across hub processes.
"""

from __future__ import annotations

from hub.core.store.claims import claim
from hub.core.store.database import (
    close_database,
    migrate,
    open_database,
    sqlite_path,
    tortoise_config,
)
from hub.core.store.models import (
    PROJECTION_MODELS,
    Agent,
    AgentStatus,
    ApiToken,
    Artifact,
    Conversation,
    Event,
    Interaction,
    InteractionStatus,
    Invitation,
    Membership,
    Message,
    PairingCode,
    Role,
    Task,
    User,
    Workspace,
)
from hub.core.store.notification_models import (
    ChannelAccount,
    ChannelLinkToken,
    DeliveredBatch,
    DeliveredCard,
    Notification,
    NotificationKind,
    NotificationSettings,
    NotificationStatus,
    UsedLink,
)
from hub.core.store.policy_models import PolicyRule
from hub.core.store.remote_models import RemoteAgent, RemoteCall
from hub.core.store.storage_faults import refused_value, storage_fault

__all__ = [
    "PROJECTION_MODELS",
    "Agent",
    "AgentStatus",
    "ApiToken",
    "Artifact",
    "ChannelAccount",
    "ChannelLinkToken",
    "Conversation",
    "DeliveredBatch",
    "DeliveredCard",
    "Event",
    "Interaction",
    "InteractionStatus",
    "Invitation",
    "Membership",
    "Message",
    "Notification",
    "NotificationKind",
    "NotificationSettings",
    "NotificationStatus",
    "PairingCode",
    "PolicyRule",
    "RemoteAgent",
    "RemoteCall",
    "Role",
    "Task",
    "UsedLink",
    "User",
    "Workspace",
    "claim",
    "close_database",
    "migrate",
    "open_database",
    "refused_value",
    "sqlite_path",
    "storage_fault",
    "tortoise_config",
]
