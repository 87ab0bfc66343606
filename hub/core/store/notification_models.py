"""Stored state of notifications and of the outside surfaces (email, Telegram, plugins).

These are entities, not projections of the log: a notification row is written in the same
transaction as the event that causes it (``hub.core.notify.notifications``) and then changes as the
outbox worker delivers it, so replaying the log never touches them.

* ``NotificationSettings``: one row per person: which surfaces get which events, whether only
  high-risk cards count, quiet hours, language. Absent row = the defaults.
* ``Notification``: the outbox. ``dedupe_key`` is unique, so one cause never becomes two
  messages on one surface.
* ``ChannelAccount`` / ``ChannelLinkToken``: a person's account on an outside surface (a
  Telegram user) and the one-time tokens that link it.
* ``DeliveredCard``: one copy of a card sent to one person on one surface, under a short
  opaque id (Telegram's callback data is at most 64 bytes), with the surface's reference to
  it (chat and message id) so it can be edited to the outcome later.
* ``DeliveredBatch``: one message offering to answer several cards of a task at once
  ("Approve all (3)"), with the cards it listed — a press decides exactly those.
* ``UsedLink``: nonces of single-use action links that have decided something.
* ``PushSubscription``: one browser's Web Push subscription (a person may have several
  devices); while a person has one, they have a ``push`` ``ChannelAccount``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from tortoise import fields
from tortoise.models import Model


class NotificationKind(StrEnum):
    WAITING = "waiting"  # a card waits for you
    FAILED = "failed"  # a task failed
    DECIDED = "decided"  # a card you were sent was decided (or expired): update your copy
    INVITED = "invited"  # an invitation to join a workspace, mailed to its address
    REMINDER = "reminder"  # a card still waits for you: sent where it has not been yet
    UPDATED = "updated"  # a card you were sent got a vote: update your copy's count


class NotificationStatus(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    SKIPPED = "skipped"  # nothing left to say (e.g. the card was decided before it went out)
    FAILED = "failed"  # a permanent error: retrying cannot help


class NotificationSettings(Model):
    user: fields.OneToOneRelation[Any] = fields.OneToOneField(
        "models.User", related_name="notification_settings", on_delete=fields.CASCADE
    )
    user_id: str
    # {"email": {"waiting": false}, ...}: only the choices the person made; the rest default.
    surfaces: dict[str, dict[str, bool]] = fields.JSONField(default=dict)
    quiet_start = fields.CharField(max_length=5, null=True)  # "22:00", local time
    quiet_end = fields.CharField(max_length=5, null=True)
    # Outside surfaces and the browser tell of high-risk cards only (failures still come);
    # the inbox shows every card regardless.
    only_high_risk = fields.BooleanField(default=False, db_default=False)
    # A high-risk card is sent during quiet hours instead of held until they end.
    high_risk_in_quiet_hours = fields.BooleanField(default=False, db_default=False)
    timezone = fields.CharField(max_length=64, default="UTC")
    language = fields.CharField(max_length=16, default="en")
    updated_at = fields.DatetimeField(auto_now=True)

    class Meta:
        table = "notification_settings"


class Notification(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    workspace: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.Workspace", related_name="notifications", on_delete=fields.CASCADE
    )
    workspace_id: str
    # None only for an invitation: its address may have no account yet.
    user: fields.ForeignKeyNullableRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="notifications", null=True, on_delete=fields.CASCADE
    )
    user_id: str | None
    surface = fields.CharField(max_length=40)
    kind = fields.CharEnumField(NotificationKind, max_length=20)
    invitation_id = fields.CharField(max_length=40, null=True)
    interaction_id = fields.CharField(max_length=40, null=True)
    task_id = fields.CharField(max_length=40, null=True)
    event_sequence = fields.BigIntField()
    dedupe_key = fields.CharField(max_length=200, unique=True)
    status = fields.CharEnumField(
        NotificationStatus, max_length=20, default=NotificationStatus.PENDING
    )
    attempts = fields.IntField(default=0)
    next_attempt_at = fields.DatetimeField()
    # A worker that claimed the row owns it until then; a crashed worker's rows come back.
    claimed_until = fields.DatetimeField(null=True)
    last_error = fields.TextField(default="")
    created_at = fields.DatetimeField()
    sent_at = fields.DatetimeField(null=True)

    class Meta:
        table = "notification"
        indexes = (("status", "next_attempt_at"),)


class ChannelAccount(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="channel_accounts", on_delete=fields.CASCADE
    )
    user_id: str
    surface = fields.CharField(max_length=40)
    external_id = fields.CharField(max_length=100)  # e.g. the Telegram user id
    address = fields.CharField(max_length=200)  # where to send: e.g. the Telegram chat id
    display_name = fields.CharField(max_length=200, default="")
    linked_at = fields.DatetimeField()

    class Meta:
        table = "channel_account"
        unique_together = (("surface", "external_id"), ("user", "surface"))


class ChannelLinkToken(Model):
    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="channel_link_tokens", on_delete=fields.CASCADE
    )
    user_id: str
    surface = fields.CharField(max_length=40)
    token_hash = fields.CharField(max_length=64, unique=True)
    expires_at = fields.DatetimeField()
    used_at = fields.DatetimeField(null=True)

    class Meta:
        table = "channel_link_token"


class DeliveredCard(Model):
    id = fields.CharField(max_length=16, primary_key=True)  # short and opaque
    surface = fields.CharField(max_length=40)
    user: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="delivered_cards", on_delete=fields.CASCADE
    )
    user_id: str
    workspace_id = fields.CharField(max_length=40)
    interaction_id = fields.CharField(max_length=40)
    address = fields.CharField(max_length=200, default="")
    external_id = fields.CharField(max_length=200, default="")
    # What the surface needs between presses: a multi-select's ticks, a pending confirmation,
    # the id of the prompt a typed answer must reply to.
    state: dict[str, Any] = fields.JSONField(default=dict)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "delivered_card"
        unique_together = (("surface", "user", "interaction_id"),)
        indexes = (("surface", "address", "external_id"),)


class DeliveredBatch(Model):
    id = fields.CharField(max_length=16, primary_key=True)  # short and opaque, like a card's
    surface = fields.CharField(max_length=40)
    user: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="delivered_batches", on_delete=fields.CASCADE
    )
    user_id: str
    workspace_id = fields.CharField(max_length=40)
    task_id = fields.CharField(max_length=40)
    interaction_ids: list[str] = fields.JSONField(default=list)
    address = fields.CharField(max_length=200, default="")
    external_id = fields.CharField(max_length=200, default="")
    # A pending confirmation; "replaced" once a newer batch message of the task took over.
    state: dict[str, Any] = fields.JSONField(default=dict)
    created_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()

    class Meta:
        table = "delivered_batch"
        indexes = (("surface", "user_id", "task_id"),)


class UsedLink(Model):
    nonce = fields.CharField(max_length=40, primary_key=True)
    user_id = fields.CharField(max_length=40)
    interaction_id = fields.CharField(max_length=40)
    used_at = fields.DatetimeField()

    class Meta:
        table = "used_link"


NOTIFICATION_MODELS: tuple[type[Model], ...] = (
    NotificationSettings,
    Notification,
    ChannelAccount,
    ChannelLinkToken,
    DeliveredCard,
    DeliveredBatch,
    UsedLink,
)


class PushSubscription(Model):
    """One browser's Web Push subscription: its push service's endpoint, and its keys.

    Messages are encrypted to the keys (RFC 8291), so the push service sees ciphertext
    only. The endpoint is a capability URL: it is never shown back in full."""

    id = fields.CharField(max_length=40, primary_key=True)
    user: fields.ForeignKeyRelation[Any] = fields.ForeignKeyField(
        "models.User", related_name="push_subscriptions", on_delete=fields.CASCADE
    )
    user_id: str
    endpoint = fields.CharField(max_length=2000, unique=True)
    p256dh = fields.CharField(max_length=200)  # the browser's ECDH public key, base64url
    auth = fields.CharField(max_length=100)  # its authentication secret, base64url
    device = fields.CharField(max_length=200, default="")  # what the person calls it
    created_at = fields.DatetimeField()
    last_sent_at = fields.DatetimeField(null=True)

    class Meta:
        table = "push_subscription"
