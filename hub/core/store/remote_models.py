"""Stored state of remote agents reached over A2A: the agent's card and key, and the call ledger.

Entities, not projections: the log records what people and agents did (``agent.remote_added``,
``task.*``), while these rows hold what only the connector needs to carry on after a
restart. Replaying the log never touches them.

* ``RemoteAgent``: one per remote agent a person added (or configuration pinned) in a
  workspace, beside its ``Agent`` row (same id). ``card`` is the card as shown, already
  reduced to inert, length-capped text; ``secret_sealed`` is the API key or bearer token,
  encrypted with the hub's secret (``hub.core.people.sealing``), never in the log nor shown again.
* ``RemoteCall``: the call ledger. One row per hub task sent to a remote agent (its primary
  key is the task id, so of two hub processes only one claims a task): the remote task and
  context ids, the last remote state, and the times a person looks for when a remote is down.
  ``owner`` and ``lease_expires_at`` say which hub process drives it
  (``hub.core.agents.remote_calls``). ``updates`` says how the hub learns of the remote's
  changes (a stream, pushes to its webhook, or polling, and why), for the person watching.
"""

from __future__ import annotations

from typing import Any

from tortoise import fields
from tortoise.models import Model


class RemoteAgent(Model):
    id = fields.CharField(max_length=40, primary_key=True)  # the Agent's id
    workspace_id = fields.CharField(max_length=40)
    url = fields.CharField(max_length=2000)  # what the person typed: where the card lives
    endpoint_url = fields.CharField(max_length=2000)  # the JSON-RPC interface the card names
    protocol_version = fields.CharField(max_length=20)  # "1.0" or "0.3"
    streaming = fields.BooleanField(default=False)
    card: dict[str, Any] = fields.JSONField(default=dict)
    pinned = fields.BooleanField(default=False)
    # How the card asks to be authenticated: "", "bearer" or "header:<Header-Name>".
    auth_scheme = fields.CharField(max_length=200, default="")
    secret_sealed = fields.TextField(null=True)
    unreachable_since = fields.DatetimeField(null=True)
    last_contact_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField()

    class Meta:
        table = "remote_agent"
        unique_together = (("workspace_id", "url"),)


class RemoteCall(Model):
    id = fields.CharField(max_length=40, primary_key=True)  # the hub task's id
    workspace_id = fields.CharField(max_length=40)
    agent_id = fields.CharField(max_length=40)
    remote_task_id = fields.CharField(max_length=200, null=True)
    context_id = fields.CharField(max_length=200, null=True)
    last_state = fields.CharField(max_length=40, default="")  # A2A state, e.g. "working"
    # The card the person is answering, and the last one whose answer went back.
    interaction_id = fields.CharField(max_length=40, null=True)
    answered_interaction_id = fields.CharField(max_length=40, null=True)
    cancel_sent_at = fields.DatetimeField(null=True)
    finished = fields.BooleanField(default=False)
    # The hub process driving the call, until ``lease_expires_at`` unless it renews: with
    # several processes on one database, exactly one talks to the remote about a call.
    owner = fields.CharField(max_length=100, null=True)
    lease_expires_at = fields.DatetimeField(null=True)
    started_at = fields.DatetimeField()
    updated_at = fields.DatetimeField()
    last_contact_at = fields.DatetimeField(null=True)
    # "", "stream", "push", "poll", "poll-push-silent" or "poll-push-refused"
    # (``plugins.a2a_connector.updates``), and when the remote last pushed a change.
    updates = fields.CharField(max_length=40, default="", db_default="")
    last_push_at = fields.DatetimeField(null=True)

    class Meta:
        table = "remote_call"
        indexes = (("finished", "workspace_id"),)
