"""People, their workspaces and their API tokens.

Signing up creates a personal workspace the person owns (spec §14: the model supports
members; the first screens are about one person). Every lookup that crosses into a
workspace goes through ``require_membership``, which answers "not found" rather than
"forbidden" so that ids of other workspaces cannot be probed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tortoise.exceptions import IntegrityError

from hub.core.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthorized
from hub.core.ids import could_be_an_id, new_id
from hub.core.people.account_events import TOKEN_CREATED, TOKEN_REVOKED, record_token_change
from hub.core.people.credentials import hash_password, hash_token, new_token, verify_password
from hub.core.people.passwords import require_strong
from hub.core.people.signup import Signup, check_admission, is_first_account
from hub.core.store.models import ApiToken, Membership, Role, User, Workspace
from hub.core.store.transactions import in_transaction
from hub.protocol.clock import iso

API_TOKEN_PREFIX = "lu_pat"
LAST_USED_PRECISION = timedelta(minutes=1)


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    local, _, domain = email.partition("@")
    if not local or "." not in domain or any(c.isspace() for c in email):
        raise InvalidInput(f"{email!r} is not an email address.", code="invalid_email")
    return email


async def create_workspace(name: str, owner: User) -> Workspace:
    async with in_transaction() as connection:
        workspace = await Workspace.create(
            using_db=connection, id=new_id("workspace"), name=name, epoch=new_id("event")
        )
        await Membership.create(
            using_db=connection,
            id=new_id("membership"),
            workspace=workspace,
            user=owner,
            role=Role.OWNER,
        )
    return workspace


async def create_user(
    email: str,
    password: str | None,
    display_name: str | None = None,
    *,
    signup: Signup | None = None,
    invited: bool = False,
) -> tuple[User, Workspace]:
    """Create a person and their personal workspace; the hub's first account is its admin.

    ``signup``: the hub's sign-up rule, for someone signing themselves up (``invited``: from
    an invitation link); None when the operator creates the account (``lineup user create``).
    """
    email = normalise_email(email)
    if password is not None:
        require_strong(password)
    display_name = (display_name or email.split("@")[0]).strip()[:200]
    # Hashed before the transaction: argon2 is slow on purpose, and sign-ups queue on it.
    password_hash = hash_password(password) if password else None
    try:
        async with in_transaction() as connection:
            first_account = await is_first_account(connection)
            if signup is not None:
                check_admission(signup, invited=invited, first_account=first_account)
            user = await User.create(
                using_db=connection,
                id=new_id("user"),
                email=email,
                display_name=display_name,
                password_hash=password_hash,
                is_admin=first_account,
            )
            workspace = await create_workspace(f"{display_name}'s workspace", user)
    except IntegrityError:
        raise Conflict(
            f"An account for {email} exists already.",
            code="email_taken",
            hint="Log in instead, or use another address.",
        ) from None
    return user, workspace


async def authenticate(email: str, password: str) -> User:
    user = await User.filter(email=email.strip().lower()).first()
    if not verify_password(user.password_hash if user else None, password) or user is None:
        raise Unauthorized(
            "Wrong email or password.", code="bad_credentials", hint="Check both and try again."
        )
    if user.disabled_at is not None:
        # Said only to someone who knows the password: it tells them whom to ask.
        raise Forbidden(
            "This account is disabled.",
            code="account_disabled",
            hint="Ask the hub's admin to enable it again.",
        )
    return user


async def user_by_email(email: str) -> User:
    user = await User.filter(email=normalise_email(email)).first()
    if user is None:
        raise NotFound(
            f"No account for {email}.",
            code="user_not_found",
            hint="Create it with `lineup user create EMAIL`.",
        )
    return user


async def create_api_token(
    user: User, name: str, *, address: str | None = None, via: str | None = None
) -> tuple[ApiToken, str]:
    """Returns the stored token row and the secret, which is shown this once.

    The audit trail records it, with the client's ``address`` and surface (``via``) when
    there is a client: a new way into the account is worth knowing about, whoever made it.
    """
    secret = new_token(API_TOKEN_PREFIX)
    token = await ApiToken.create(
        id=new_id("api_token"),
        user=user,
        name=name.strip()[:200] or "token",
        token_hash=hash_token(secret),
    )
    await record_token_change(
        user, TOKEN_CREATED, token_id=token.id, name=token.name, address=address, via=via
    )
    return token, secret


def token_view(token: ApiToken) -> dict[str, Any]:
    """A token as the API, the pages and the command line list it: never its secret."""
    return {
        "id": token.id,
        "name": token.name,
        "createdAt": iso(token.created_at),
        "lastUsedAt": iso(token.last_used_at),
        "revokedAt": iso(token.revoked_at),
    }


async def active_tokens(user: User) -> list[ApiToken]:
    """The person's tokens that still work, oldest first."""
    return await ApiToken.filter(user_id=user.id, revoked_at=None).order_by("created_at", "id")


async def token_owner(token_id: str) -> User:
    """Whose active token ``token_id`` is (for the operator, who revokes by id alone)."""
    token = (
        await ApiToken.filter(id=token_id, revoked_at=None).first()
        if could_be_an_id(token_id)
        else None
    )
    if token is None:
        raise NotFound(
            f"No active token {token_id}.",
            code="token_not_found",
            hint="List a person's tokens with `lineup token list EMAIL`.",
        )
    return await User.get(id=token.user_id)


async def user_for_token(secret: str) -> User:
    token = await ApiToken.filter(token_hash=hash_token(secret), revoked_at=None).first()
    if token is None:
        raise Unauthorized(
            "This API token is unknown or revoked.",
            code="invalid_token",
            hint="Create a new token in Settings → API tokens.",
        )
    now = datetime.now(UTC)
    # "Last used" is for people deciding which token to revoke: a minute's precision is
    # plenty, and a write on every API call would serialise busy clients on SQLite.
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_PRECISION:
        await ApiToken.filter(id=token.id).update(last_used_at=now)
    user = await User.get(id=token.user_id)
    if user.disabled_at is not None:
        raise Unauthorized(
            "This API token belongs to a disabled account.",
            code="invalid_token",
            hint="Ask the hub's admin to enable the account again.",
        )
    return user


async def revoke_api_token(
    user: User, token_id: str, *, address: str | None = None, via: str | None = None
) -> ApiToken:
    """Revoke one of ``user``'s tokens (recorded in the audit trail); returns it."""
    updated = await ApiToken.filter(id=token_id, user_id=user.id, revoked_at=None).update(
        revoked_at=datetime.now(UTC)
    )
    if not updated:
        raise NotFound(f"No active token {token_id}.", code="token_not_found")
    token = await ApiToken.get(id=token_id)
    await record_token_change(
        user, TOKEN_REVOKED, token_id=token.id, name=token.name, address=address, via=via
    )
    return token


async def workspaces_of(user: User) -> list[Workspace]:
    ids = await Membership.filter(user_id=user.id).values_list("workspace_id", flat=True)
    return await Workspace.filter(id__in=list(ids)).order_by("created_at")


async def require_membership(user: User, workspace_id: str) -> Membership:
    membership = (
        await Membership.filter(user_id=user.id, workspace_id=workspace_id).first()
        if could_be_an_id(workspace_id)
        else None
    )
    if membership is None:
        raise NotFound(f"Workspace {workspace_id} does not exist.", code="workspace_not_found")
    return membership
