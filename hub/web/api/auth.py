"""Accounts: sign up, log in and out, who am I, personal API tokens.

Failed logins are capped per address and per account (a short sliding window), so a
password cannot be guessed at speed; argon2 makes each guess slow as well.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint, current_app
from quart_schema import document_response, security_scheme

from hub.core.errors import Unauthorized
from hub.core.people import invitations
from hub.core.people.account_events import record_failed_sign_in
from hub.core.people.accounts import (
    active_tokens,
    authenticate,
    create_api_token,
    create_user,
    revoke_api_token,
    token_view,
    workspaces_of,
)
from hub.core.people.passwords import change_password
from hub.core.people.ratelimit import FailureLimiter
from hub.core.people.signup import Signup
from hub.core.people.two_factor import check_code, is_on
from hub.core.store.models import User
from hub.host.client_address import client_address
from hub.host.identity import current_caller, end_session, session_signed_in, start_session
from hub.host.settings import settings_of
from hub.web.api.answers import (
    MeAnswer,
    NewTokenAnswer,
    PasswordChanged,
    Registered,
    SignedIn,
    TokenAnswer,
    TokenList,
)
from hub.web.api.base import ApiModel, json_body
from hub.web.api.openapi import no_content

blueprint = Blueprint("api_auth", __name__, url_prefix="/api/v1")

LOGIN_FAILURES = FailureLimiter(
    per_source=10, overall=10_000, window_s=60.0, code="login_rate_limited", what="logins"
)
ACCOUNT_FAILURES = FailureLimiter(
    per_source=20, overall=10_000, window_s=60.0, code="login_rate_limited", what="logins"
)


async def check_password(email: str, password: str, *, via: str) -> User:
    """The one password check of the API and the pages: one budget of guesses, and every
    wrong guess in the audit trail of the account it was aimed at."""
    source, account = client_address(), email.strip().lower()
    LOGIN_FAILURES.check(source)
    ACCOUNT_FAILURES.check(account)
    try:
        return await authenticate(email, password)
    except Unauthorized:
        LOGIN_FAILURES.record_failure(source)
        ACCOUNT_FAILURES.record_failure(account)
        await record_failed_sign_in(email, address=source, via=via)
        raise


async def check_second_factor(user: User, code: str, *, via: str) -> None:
    """The code after the password, on the API and the pages alike: a wrong one is a failed
    sign-in in the account's audit trail, as a wrong password is."""
    try:
        await check_code(user, code, secret_key=settings_of(current_app).secret_key)
    except Unauthorized:
        await record_failed_sign_in(user.email, address=client_address(), via=via)
        raise


class Registration(ApiModel):
    email: str = Field(min_length=3, max_length=320)
    password: str = Field(min_length=1, max_length=1000)
    display_name: str | None = Field(None, max_length=200)
    invitation: str | None = Field(
        None,
        max_length=200,
        description="The token of an invitation link (`/join/{token}`): the account joins its "
        "workspace, and a hub that takes accounts by invitation only lets it be made.",
    )


class Credentials(ApiModel):
    email: str = Field(min_length=1, max_length=320)
    password: str = Field(min_length=1, max_length=1000)
    # With two-factor sign-in on: the authenticator's code, or a recovery code.
    totp_code: str | None = Field(None, max_length=100)


class PasswordChange(ApiModel):
    current_password: str = Field(min_length=1, max_length=1000)
    new_password: str = Field(min_length=1, max_length=1000)


class NewToken(ApiModel):
    name: str = Field(min_length=1, max_length=200)


@blueprint.post("/auth/register")
@document_response(Registered, 201)
@security_scheme([])
@json_body(Registration, public=True)
async def register(body: Registration) -> tuple[dict[str, Any], int]:
    """Create an account and its personal workspace; the response also signs you in.

    The hub's sign-up rule applies: 403 `invitation_required` (join from an invitation link
    instead) or `signup_closed` (the admin creates accounts)."""
    if body.invitation is not None:
        invitations.ensure_addressed_to(
            await invitations.open_invitation(body.invitation), body.email
        )
    user, workspace = await create_user(
        body.email,
        body.password,
        body.display_name,
        signup=Signup(settings_of(current_app).signup),
        invited=body.invitation is not None,
    )
    if body.invitation is not None:
        await invitations.accept(body.invitation, user, address=client_address())
    await start_session(user, via="api")
    return {"userId": user.id, "workspaceId": workspace.id}, 201


@blueprint.post("/auth/login")
@document_response(SignedIn)
@security_scheme([])
@json_body(Credentials, public=True)
async def login(body: Credentials) -> dict[str, Any]:
    """Sign in with email and password: sets the session cookie. With two-factor sign-in
    on, a request without ``totpCode`` is refused with ``totp_required``: send it again
    with the code (or a recovery code)."""
    user = await check_password(body.email, body.password, via="api")
    if is_on(user):
        if not body.totp_code:
            raise Unauthorized(
                "This account signs in with a code as well.",
                code="totp_required",
                hint="Send the request again with totpCode: the code your authenticator "
                "app shows, or a recovery code.",
            )
        await check_second_factor(user, body.totp_code, via="api")
    await start_session(user, via="api")
    workspaces = await workspaces_of(user)
    return {
        "userId": user.id,
        "displayName": user.display_name,
        "workspaceIds": [w.id for w in workspaces],
    }


@blueprint.post("/auth/logout")
@no_content
async def logout() -> tuple[str, int]:
    """End the browser session (API tokens stay valid until revoked)."""
    await end_session(via="api")
    return "", 204


@blueprint.get("/me")
@document_response(MeAnswer)
async def me() -> dict[str, Any]:
    """The signed-in person."""
    caller = await current_caller()
    return {
        "userId": caller.user.id,
        "email": caller.user.email,
        "displayName": caller.user.display_name,
        "authenticatedBy": "session" if caller.by_session else "token",
    }


@blueprint.post("/me/password")
@document_response(PasswordChanged)
@json_body(PasswordChange)
async def password(body: PasswordChange) -> dict[str, Any]:
    """Change your password, giving the current one; it ends your other sessions (the one
    asking stays signed in; with a token, every session ends). Tokens stay valid."""
    caller = await current_caller()
    signed_in = await session_signed_in() if caller.by_session else None
    ended = await change_password(
        caller.user,
        body.current_password,
        body.new_password,
        keep_session=signed_in.session_id if signed_in else None,
        address=client_address(),
        via="api",
    )
    return {"sessionsEnded": ended}


@blueprint.post("/auth/tokens")
@document_response(NewTokenAnswer, 201)
@json_body(NewToken)
async def create_token(body: NewToken) -> tuple[dict[str, Any], int]:
    """A personal API token for scripts and notebooks. The token is shown this once."""
    caller = await current_caller()
    token, secret = await create_api_token(
        caller.user, body.name, address=client_address(), via="api"
    )
    return {**token_view(token), "token": secret}, 201


@blueprint.get("/auth/tokens")
@document_response(TokenList)
async def list_tokens() -> dict[str, Any]:
    """Your tokens that still work (never the secrets)."""
    caller = await current_caller()
    return {"tokens": [token_view(t) for t in await active_tokens(caller.user)]}


@blueprint.post("/auth/tokens/<token_id>/revoke")
@document_response(TokenAnswer)
async def revoke_token(token_id: str) -> dict[str, Any]:
    """Revoke one of your tokens; it stops working at once."""
    caller = await current_caller()
    token = await revoke_api_token(caller.user, token_id, address=client_address(), via="api")
    return token_view(token)
