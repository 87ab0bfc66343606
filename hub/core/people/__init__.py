"""People and their workspaces: accounts and API tokens, sign-in events and the audit trail,
members and roles, invitations, secrets: their hashes and those sealed with the hub's key, and
rate limits.
"""

from __future__ import annotations

from hub.core.people.account_events import record_failed_sign_in, record_sign_in, record_sign_out
from hub.core.people.accounts import (
    authenticate,
    create_api_token,
    create_user,
    require_membership,
    revoke_api_token,
    user_by_email,
    user_for_token,
    workspaces_of,
)
from hub.core.people.audit import audit_trail
from hub.core.people.credentials import hash_pairing_code, hash_token, new_pairing_code, new_token
from hub.core.people.invitations import (
    accept,
    invitation_token,
    invite,
    join_url,
    open_invitation,
    pending_invitations,
    revoke,
)
from hub.core.people.member_changes import is_open
from hub.core.people.members import change_role, list_members, parse_role, remove_member
from hub.core.people.ratelimit import FailureLimiter

__all__ = [
    "FailureLimiter",
    "accept",
    "audit_trail",
    "authenticate",
    "change_role",
    "create_api_token",
    "create_user",
    "hash_pairing_code",
    "hash_token",
    "invitation_token",
    "invite",
    "is_open",
    "join_url",
    "list_members",
    "new_pairing_code",
    "new_token",
    "open_invitation",
    "parse_role",
    "pending_invitations",
    "record_failed_sign_in",
    "record_sign_in",
    "record_sign_out",
    "remove_member",
    "require_membership",
    "revoke",
    "revoke_api_token",
    "user_by_email",
    "user_for_token",
    "workspaces_of",
]
