"""The stored objects of spec §6.1.

Two kinds of table live here:

* **Entities** the hub owns outright: workspaces, users, memberships, agents, pairing codes,
  API tokens. They hold secrets (only their hashes) that never go into the event log.
* **Projections** of the event log: conversations, messages, tasks, interactions,
  artifacts. They are written only by ``hub.core.work.projection`` while an event is appended,
  and can be dropped and rebuilt from the log (``rebuild_projections``).

Every row that belongs to a workspace carries ``workspace_id`` so that every query can be
scoped by it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from tortoise import fields
from tortoise.models import Model


class Role(StrEnum):
    OWNER = "owner"
    MEMBER = "member"
    VIEWER = "viewer"


class AgentStatus(StrEnum):
    PENDING = "pending"  # paired, its owner has not confirmed its name yet
    ONLINE = "online"
    OFFLINE = "offline"
    REVOKED = "revoked"


class InteractionStatus(StrEnum):
    PENDING = "pending"
    RESOLVED = "resolved"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class Workspace(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    name = fields.CharField(max_length=200)
    # Highest sequence handed out; bumped as the first statement of every append so that
    # appends to one workspace serialise on this row (see hub.core.log.events).
    last_sequence = fields.BigIntField(default=0, db_default=0)
    # Fixed when the log is created; a client holding sequences of another epoch must resync.
    epoch = fields.CharField(max_length=40)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "workspace"


class User(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    email = fields.CharField(max_length=320, unique=True)
    display_name = fields.CharField(max_length=200)
    password_hash = fields.CharField(max_length=200, null=True)
    # The hub's operator: the first account made on the hub (or, on a hub older than the
    # flag, its oldest account). Admins list, disable and reset other people's accounts.
    is_admin = fields.BooleanField(default=False, db_default=False)
    # Set: the person can no longer sign in, and their sessions and API tokens open nothing.
    disabled_at = fields.DatetimeField(null=True)
    # Two-factor sign-in (hub.core.people.two_factor): the TOTP secret once confirmed,
    # sealed with the hub's key (hub.core.people.sealing), and the last time step a code was
    # accepted for, so a code is good once.
    totp_secret_sealed = fields.CharField(max_length=255, null=True)
    totp_last_step = fields.BigIntField(default=0, db_default=0)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "user_account"


class Membership(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="memberships", on_delete=fields.CASCADE
    )
    workspace_id: str
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="memberships", on_delete=fields.CASCADE
    )
    user_id: str
    role = fields.CharEnumField(Role, max_length=20, default=Role.OWNER)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "membership"
        unique_together = (("workspace", "user"),)


class Invitation(Model):
    """An owner's offer to join a workspace with a role: one use, until ``expires_at``.

    The token is derived from the hub's secret and the invitation's id (see
    ``hub.core.people.invitations``) and stored only as a hash, so the table alone lets no one in.
    ``email`` is set when the invitation was mailed: only that address may accept it.
    """

    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="invitations", on_delete=fields.CASCADE
    )
    workspace_id: str
    role = fields.CharEnumField(Role, max_length=20, default=Role.MEMBER)
    email = fields.CharField(max_length=320, null=True)
    invited_by: fields.ForeignKeyNullableRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="invitations_sent", null=True, on_delete=fields.SET_NULL
    )
    invited_by_id: str | None
    token_hash = fields.CharField(max_length=64, unique=True)
    expires_at = fields.DatetimeField()
    accepted_at = fields.DatetimeField(null=True)
    accepted_by_id = fields.CharField(max_length=40, null=True)
    revoked_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "invitation"


class ApiToken(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="api_tokens", on_delete=fields.CASCADE
    )
    user_id: str
    name = fields.CharField(max_length=200)
    token_hash = fields.CharField(max_length=64, unique=True)
    created_at = fields.DatetimeField(auto_now_add=True)
    last_used_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "api_token"


class RecoveryCode(Model):
    """One of a person's single-use codes for signing in without their authenticator."""

    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="recovery_codes", on_delete=fields.CASCADE
    )
    user_id: str
    code_hash = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "totp_recovery_code"
        unique_together = (("user", "code_hash"),)


class UserSession(Model):
    """A browser's sign-in: the session cookie carries only a random key, whose hash finds
    this row. Signing out deletes the row, so a copy of the cookie taken before stops
    working; rows give a person a list of where they are signed in, and a way to end them.
    """

    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="sessions", on_delete=fields.CASCADE
    )
    user_id: str
    key_hash = fields.CharField(max_length=64, unique=True)
    user_agent = fields.CharField(max_length=300, null=True)
    created_at = fields.DatetimeField(auto_now_add=True)
    last_seen_at = fields.DatetimeField()
    expires_at = fields.DatetimeField()

    class Meta:
        table = "user_session"


class Agent(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="agents", on_delete=fields.CASCADE
    )
    workspace_id: str
    name = fields.CharField(max_length=200)
    runtime = fields.CharField(max_length=100, default="")
    version = fields.CharField(max_length=100, default="")
    capabilities: list[Any] = fields.JSONField(default=list)
    status = fields.CharEnumField(AgentStatus, max_length=20, default=AgentStatus.PENDING)
    credential_hash = fields.CharField(max_length=64, unique=True, null=True)
    last_heartbeat_at = fields.DatetimeField(null=True)
    # The session holding the agent's one connection: its latest ``agent.connected``. A
    # socket that closes marks the agent offline only while it is still this one.
    session_id = fields.CharField(max_length=40, null=True)
    created_at = fields.DatetimeField(auto_now_add=True)
    confirmed_at = fields.DatetimeField(null=True)
    revoked_at = fields.DatetimeField(null=True)

    class Meta:
        table = "agent"
        # The agent list, on the pages that show it, in the order it is paired.
        indexes = (("workspace_id", "created_at", "id"),)


class PairingCode(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="pairing_codes", on_delete=fields.CASCADE
    )
    workspace_id: str
    created_by: fields.ForeignKeyNullableRelation[User] = fields.ForeignKeyField(
        "models.User", related_name="pairing_codes", null=True, on_delete=fields.SET_NULL
    )
    created_by_id: str | None
    # Keyed hash (HMAC with the hub's secret): codes are short, so a plain hash of a leaked
    # table could be reversed by trying every code.
    code_hash = fields.CharField(max_length=64, unique=True)
    expires_at = fields.DatetimeField()
    used_at = fields.DatetimeField(null=True)
    agent: fields.ForeignKeyNullableRelation[Agent] = fields.ForeignKeyField(
        "models.Agent", related_name="pairing_codes", null=True, on_delete=fields.SET_NULL
    )
    agent_id: str | None
    created_at = fields.DatetimeField(auto_now_add=True)

    class Meta:
        table = "pairing_code"


class Event(Model):
    """One fact in a workspace's append-only log. Never updated, never deleted."""

    pk_id = fields.BigIntField(primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="events", on_delete=fields.CASCADE
    )
    workspace_id: str
    sequence = fields.BigIntField()
    # The envelope id: the idempotency key of the write that produced this event, unique
    # per actor. Each actor (a person, an agent, the hub itself as "system") has its own
    # keys, so no one can take another's: an agent sending "policy:<card>:1" first must not
    # make the hub's own expiry step look like a resend. The event's identity is
    # (workspace, sequence).
    id = fields.CharField(max_length=100)
    type = fields.CharField(max_length=100)
    actor = fields.CharField(max_length=100)  # "user:usr_…", "agent:agt_…", "system"
    conversation_id = fields.CharField(max_length=40, null=True)
    task_id = fields.CharField(max_length=40, null=True)
    correlation_id = fields.CharField(max_length=100, null=True)
    # The agent this event must reach (downlink); replay to an agent reads by this column.
    recipient_agent_id = fields.CharField(max_length=40, null=True)
    payload: dict[str, Any] = fields.JSONField(default=dict)
    occurred_at = fields.DatetimeField()  # as the sender claims it
    recorded_at = fields.DatetimeField()  # the hub's clock; projections use this one

    class Meta:
        table = "event"
        unique_together = (("workspace", "sequence"), ("workspace", "actor", "id"))
        # Replay to an agent reads by recipient; a task's page reads its timeline by task.
        indexes = (
            ("workspace_id", "recipient_agent_id", "sequence"),
            ("workspace_id", "task_id", "sequence"),
        )


# --- projections of the event log ------------------------------------------------------


class Conversation(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="conversations", on_delete=fields.CASCADE
    )
    workspace_id: str
    title = fields.CharField(max_length=500)
    agent_ids: list[str] = fields.JSONField(default=list)
    created_by = fields.CharField(max_length=100)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "conversation"
        # The conversation list: the most recently active first, read in the index's order.
        indexes = (("workspace_id", "updated_at", "id"),)


class Message(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="messages", on_delete=fields.CASCADE
    )
    workspace_id: str
    conversation: fields.ForeignKeyRelation[Conversation] = fields.ForeignKeyField(
        "models.Conversation", related_name="messages", on_delete=fields.CASCADE
    )
    conversation_id: str
    author = fields.CharField(max_length=100)  # "user:…", "agent:…", "system"
    content = fields.TextField()
    attachments: list[Any] = fields.JSONField(default=list)
    target_agent_id = fields.CharField(max_length=40, null=True)
    task_id = fields.CharField(max_length=40, null=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "message"
        # A conversation's thread, a page at a time in its order; a task's messages.
        indexes = (
            ("workspace_id", "conversation_id", "created_at", "id"),
            ("workspace_id", "task_id", "created_at"),
        )


class Task(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="tasks", on_delete=fields.CASCADE
    )
    workspace_id: str
    conversation: fields.ForeignKeyNullableRelation[Conversation] = fields.ForeignKeyField(
        "models.Conversation", related_name="tasks", null=True, on_delete=fields.SET_NULL
    )
    conversation_id: str | None
    parent: fields.ForeignKeyNullableRelation[Task] = fields.ForeignKeyField(
        "models.Task", related_name="children", null=True, on_delete=fields.CASCADE
    )
    parent_id: str | None
    title = fields.CharField(max_length=500)
    description = fields.TextField(default="")
    status = fields.CharField(max_length=30)
    progress = fields.IntField(null=True)
    summary = fields.TextField(default="")
    error = fields.TextField(default="")
    target_agent_id = fields.CharField(max_length=40, null=True)
    created_by = fields.CharField(max_length=100)
    cancel_requested_at = fields.DatetimeField(null=True)
    cancel_reason = fields.TextField(default="")
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "task"
        # Every list of tasks is a workspace's, and one workspace can hold tens of thousands:
        # the task list reads newest first in the index's order; the inbox reads a status's
        # tasks of the last days; a task's page reads its children, a conversation's its
        # tasks. (An index sorted like the list hands over a page of it, not all of it: the
        # id, every list's tie-break, ends each one.)
        # Presence asks whether an agent has open work each time one comes or goes: by agent
        # and status, a look at its own tasks, where a fleet of two thousand reconnecting
        # read the workspace's every task once per agent.
        indexes = (
            ("workspace_id", "created_at", "id"),
            ("workspace_id", "status", "updated_at", "id"),
            ("workspace_id", "parent_id", "created_at", "id"),
            ("workspace_id", "conversation_id", "created_at", "id"),
            ("target_agent_id", "status"),
        )


class Interaction(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="interactions", on_delete=fields.CASCADE
    )
    workspace_id: str
    task: fields.ForeignKeyNullableRelation[Task] = fields.ForeignKeyField(
        "models.Task", related_name="interactions", null=True, on_delete=fields.CASCADE
    )
    task_id: str | None
    conversation_id = fields.CharField(max_length=40, null=True)
    agent_id = fields.CharField(max_length=40, null=True)
    type = fields.CharField(max_length=20)
    status = fields.CharEnumField(
        InteractionStatus, max_length=20, default=InteractionStatus.PENDING
    )
    # The card as the agent asked for it: title, description, risk, options, details, ...
    payload: dict[str, Any] = fields.JSONField(default=dict)
    response: dict[str, Any] | None = fields.JSONField(null=True)
    responded_by = fields.CharField(max_length=100, null=True)
    responded_via = fields.CharField(max_length=40, null=True)
    responded_at = fields.DatetimeField(null=True)
    expires_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField()
    # The approval policy that applies (the agent's or a workspace rule's), approvers as
    # user ids; None: the first answer of anyone allowed decides (see hub.core.approvals.policies).
    policy: dict[str, Any] | None = fields.JSONField(null=True)
    # Quorum votes so far, oldest first (null on cards asked before policies existed).
    votes: list[Any] | None = fields.JSONField(null=True)
    reminded_at = fields.DatetimeField(null=True)
    escalated_at = fields.DatetimeField(null=True)
    # When the policy clock must next look at this card (reminder, escalation, expiry).
    policy_due_at = fields.DatetimeField(null=True)
    # Set when the agent that asked took the card back (``interaction.withdrawn``; status
    # cancelled): ``{"reason", "note"}``, the reason one of the protocol's, the note its text.
    withdrawal: dict[str, Any] | None = fields.JSONField(null=True)
    withdrawn_at = fields.DatetimeField(null=True)
    # When the answer went out on the agent's connection (``interaction.delivered``); None
    # while it waits for the agent, and for agents the hub does not reach over LAP.
    delivered_at = fields.DatetimeField(null=True)
    # Whom an open card waits for, so that "waiting for me" is one indexed read: None for
    # anyone who may answer, else " <user id> <user id> " (the approvers its policy names
    # who have not voted yet); and " <user id> ... " of everyone who voted on it.
    # Kept by the projection with the policy and the votes (hub.core.work.inbox_counts).
    waiting_on: str | None = fields.TextField(null=True)
    voted_by = fields.TextField(default="", db_default="")

    class Meta:
        table = "interaction"
        # "Waiting for me" reads a workspace's pending cards, oldest first; the policy clock
        # reads due ones; a task's page and a conversation's read their own cards.
        indexes = (
            ("workspace_id", "status", "created_at", "id"),
            ("status", "policy_due_at"),
            ("workspace_id", "task_id", "created_at"),
            ("workspace_id", "conversation_id", "created_at"),
        )


class Artifact(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="artifacts", on_delete=fields.CASCADE
    )
    workspace_id: str
    task: fields.ForeignKeyNullableRelation[Task] = fields.ForeignKeyField(
        "models.Task", related_name="artifacts", null=True, on_delete=fields.CASCADE
    )
    task_id: str | None
    name = fields.CharField(max_length=500)
    url = fields.TextField()
    mime_type = fields.CharField(max_length=200, null=True)
    summary = fields.TextField(default="")
    created_by = fields.CharField(max_length=100)
    created_at = fields.DatetimeField()

    class Meta:
        table = "artifact"
        # A task's page lists its artifacts.
        indexes = (("workspace_id", "task_id", "created_at"),)


class InboxCount(Model):
    """One of the figures the inbox and every page's badge show, kept by the projection in
    the transaction of the event that changes it (``hub.core.work.inbox_counts`` says which
    figures and how they add up), so a page reads a few rows instead of counting many.

    ``agent_id`` is "" for the figure over every agent, ``person`` "" for one that is
    nobody's own, ``day`` "" for one that is not counted by day (else "YYYY-MM-DD", UTC).
    """

    pk_id = fields.BigIntField(primary_key=True)
    workspace: fields.ForeignKeyRelation[Workspace] = fields.ForeignKeyField(
        "models.Workspace", related_name="inbox_counts", on_delete=fields.CASCADE
    )
    workspace_id: str
    figure = fields.CharField(max_length=20)
    person = fields.CharField(max_length=40, default="")
    agent_id = fields.CharField(max_length=40, default="")
    day = fields.CharField(max_length=10, default="")
    n = fields.BigIntField(default=0)

    class Meta:
        table = "inbox_count"
        unique_together = (("workspace", "figure", "person", "agent_id", "day"),)


PROJECTION_MODELS: tuple[type[Model], ...] = (
    InboxCount,
    Artifact,
    Interaction,
    Message,
    Task,
    Conversation,
)
"""Tables derived from the log, in an order that is safe to delete."""
