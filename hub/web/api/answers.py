"""What the JSON API answers, as models for the OpenAPI document.

The views build their answers from ``hub.core.work.views`` and friends; these models describe
those shapes so that a client generated from ``/api/openapi.json`` knows the fields, and
the API fuzz test (tests/fuzz/test_api_schema.py) checks every answer against them. They
list the fields a client can rely on; an answer may carry more (``extra`` is allowed), so
adding a field never breaks a client. Times are the wire format of ``hub.protocol.base``.
"""

from __future__ import annotations

from typing import Any

from hub.web.api.base import ApiModel

Time = str


class TaskAnswer(ApiModel):
    id: str
    workspace_id: str
    conversation_id: str | None
    parent_task_id: str | None
    title: str
    description: str
    status: str
    progress: Any
    summary: str | None
    error: Any
    target_agent_id: str | None
    created_by: str
    cancel_requested: bool
    cancel_requested_at: Time | None
    cancel_reason: str | None
    created_at: Time | None
    updated_at: Time | None


class TaskList(ApiModel):
    """A page; ``nextCursor`` asks for the next one, ``null`` on the last."""

    tasks: list[TaskAnswer]
    next_cursor: str | None


class InteractionAnswer(ApiModel):
    id: str
    workspace_id: str
    task_id: str | None
    conversation_id: str | None
    agent_id: str | None
    type: str
    status: str
    card: dict[str, Any]
    response: Any
    responded_by: str | None
    responded_by_name: str | None
    via: str | None
    responded_at: Time | None
    # When the answer went out on the agent's connection; null while it waits for the agent.
    delivered_at: Time | None = None
    expires_at: Time | None
    created_at: Time | None


class ArtifactAnswer(ApiModel):
    id: str
    task_id: str | None
    name: str
    url: str | None
    mime_type: str | None
    summary: str | None
    created_by: str
    created_at: Time | None


class ConversationAnswer(ApiModel):
    id: str
    workspace_id: str
    title: str
    agent_ids: list[str]
    created_by: str
    created_at: Time | None
    updated_at: Time | None


class ConversationList(ApiModel):
    """A page; ``nextCursor`` asks for the next one, ``null`` on the last."""

    conversations: list[ConversationAnswer]
    next_cursor: str | None


class MessageAnswer(ApiModel):
    id: str
    conversation_id: str
    author: str
    author_kind: str
    content: str
    attachments: list[Any]
    target_agent_id: str | None
    task_id: str | None
    created_at: Time | None


class MessageList(ApiModel):
    """A page; ``nextCursor`` asks for the next (earlier) one, ``null`` on the last."""

    messages: list[MessageAnswer]
    next_cursor: str | None


class PostedMessage(ApiModel):
    """The message, and the task it started when it was tracked as one."""

    message: MessageAnswer
    task: TaskAnswer | None


class AgentAnswer(ApiModel):
    id: str
    workspace_id: str
    name: str | None
    runtime: str | None
    version: str | None
    status: str
    connected: bool
    last_heartbeat_at: Time | None
    capabilities: list[Any]
    created_at: Time | None
    confirmed_at: Time | None
    revoked_at: Time | None
    connection_lost: Any


class AgentList(ApiModel):
    """A page; ``nextCursor`` asks for the next one, ``null`` on the last."""

    agents: list[AgentAnswer]
    next_cursor: str | None


class RemoteAgentAnswer(AgentAnswer):
    """An A2A agent the hub calls: the agent, plus its card and how it is reached."""

    remote: dict[str, Any]


class RemoteAgentList(ApiModel):
    agents: list[RemoteAgentAnswer]


class QuietHoursAnswer(ApiModel):
    start: str
    end: str
    let_high_risk_through: bool


class NotificationPreferences(ApiModel):
    surfaces: dict[str, dict[str, bool]]
    surfaces_not_set_up: list[str]
    events: list[str]
    only_high_risk: bool
    quiet_hours: QuietHoursAnswer | None
    timezone: str
    language: str
    languages: list[str]


class TokenAnswer(ApiModel):
    id: str
    name: str
    created_at: Time | None
    last_used_at: Time | None
    revoked_at: Time | None


class NewTokenAnswer(TokenAnswer):
    token: str


class TokenList(ApiModel):
    tokens: list[TokenAnswer]


class WorkspaceAnswer(ApiModel):
    id: str
    name: str
    role: str
    epoch: str
    last_sequence: int
    created_at: Time | None


class WorkspaceList(ApiModel):
    workspaces: list[WorkspaceAnswer]


class PairingCodeAnswer(ApiModel):
    code: str
    expires_at: Time
    command: str


class MeAnswer(ApiModel):
    user_id: str
    email: str
    display_name: str
    authenticated_by: str


class PasswordChanged(ApiModel):
    sessions_ended: int


class ResetRequested(ApiModel):
    link_valid_for_s: int


class PasswordReset(ApiModel):
    sessions_ended: int


class TwoFactorStatus(ApiModel):
    enabled: bool
    recovery_codes_left: int


class TwoFactorSetup(ApiModel):
    secret: str
    otpauth_uri: str


class RecoveryCodes(ApiModel):
    recovery_codes: list[str]


class SignedIn(ApiModel):
    user_id: str
    display_name: str
    workspace_ids: list[str]


class Registered(ApiModel):
    user_id: str
    workspace_id: str


class EventAnswer(ApiModel):
    """One event in the LAP envelope (spec §10)."""

    id: str
    type: str
    version: str
    occurred_at: Time
    recorded_at: Time
    workspace_id: str
    sequence: int
    actor: str
    payload: dict[str, Any]


class EventPage(ApiModel):
    events: list[EventAnswer]
    epoch: str
    last_sequence: int
    has_more: bool


class AuditEntry(ApiModel):
    """Who did what, when; the other fields name the subject (an agent, a card, a token,
    the account signed in to, the outcome and the client's address)."""

    sequence: int
    type: str
    actor: str
    at: Time
    task_id: str | None


class AuditPage(ApiModel):
    entries: list[AuditEntry]
    has_more: bool
    next_cursor: str | None


class TaskDetail(TaskAnswer):
    """The task with its child tasks, cards, artifacts and the events that trace it."""

    children: list[TaskAnswer]
    interactions: list[InteractionAnswer]
    artifacts: list[ArtifactAnswer]
    timeline: list[EventAnswer]


class SearchResult(ApiModel):
    """One thing found. ``kind``: ``task``, ``message``, ``card`` or ``agent``; ``title``:
    a task's or card's title, an agent's name (``null`` for a message); ``text``: the part
    of its text the search found, cut short; ``url``: its page on the hub. Plain text,
    written by agents among others: show it escaped."""

    kind: str
    id: str
    title: str | None
    text: str
    url: str
    status: str | None = None
    conversation_id: str | None = None
    created_at: Time | None = None


class SearchResults(ApiModel):
    """A page, best match first; ``nextCursor`` asks for the next one, ``null`` on the last."""

    items: list[SearchResult]
    next_cursor: str | None
