"""Who is calling: a personal API token (``Authorization: Bearer …``) or the session cookie.

Both the JSON API and the client WebSocket ask ``current_caller()``. The session is Quart's
signed cookie holding the key of a session the hub keeps (``hub.core.people.sessions``), so
signing out ends it for every copy of the cookie: HttpOnly (no script reads it),
SameSite=Lax (a cross-site form post does not carry it) and Secure whenever the hub's
public URL is https.

A request authenticated by cookie that changes something — or opens a WebSocket — must also
come from the hub's own origin when the browser says where it comes from (``Origin``):
SameSite already keeps the cookie off most cross-site requests, and this closes the rest
(older browsers, cross-site WebSocket hijacking). Bearer tokens are never sent by a browser
on its own, so they need no such check.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from itsdangerous import URLSafeTimedSerializer
from quart import Quart, current_app, g, has_request_context, request, session, websocket
from quart.sessions import SecureCookieSessionInterface

from hub.core.errors import Forbidden, InvalidInput, Unauthorized
from hub.core.people.account_events import record_sign_in, record_sign_out
from hub.core.people.accounts import require_membership, user_for_token
from hub.core.people.ratelimit import FailureLimiter
from hub.core.people.sessions import (
    SESSION_LIFETIME,
    SignedIn,
    close_session,
    open_session,
    signed_in,
)
from hub.core.store.models import Membership, Role, User
from hub.host.client_address import client_address

# The same key and cookie the pages use (hub.web.pages.session): one sign-in serves the
# pages, the JSON API and the client WebSocket alike.
SESSION_KEY = "session_key"
SESSION_COOKIE_NAME = "lineup_session"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The surfaces a person's own client may say it is when it answers with a personal token.
# A token is a program acting for the person; the notebook inbox is one such program and
# its answers should read "via a notebook", not "via the API". Surfaces with a transport of
# their own (email links, Telegram) are never claimable: only the hub's channel records them.
TOKEN_SURFACES = frozenset({"api", "notebook"})
# Tokens are long random secrets, out of reach of guessing; the cap is for a client stuck in
# a loop with a revoked token, or someone scanning: each failure costs a database lookup.
# A source that keeps sending bad ones is refused for the rest of the minute.
TOKEN_FAILURES = FailureLimiter(
    per_source=30, overall=3_000, window_s=60.0, code="token_rate_limited", what="API tokens"
)


@dataclass(frozen=True, slots=True)
class Caller:
    user: User
    by_session: bool

    @property
    def actor(self) -> str:
        """How the log names this person: ``user:usr_…``."""
        return f"user:{self.user.id}"

    @property
    def surface(self) -> str:
        """The ``via`` of their answers: a browser session is the web UI, a token the API."""
        return "web" if self.by_session else "api"

    def answering_via(self, claimed: str | None) -> str:
        """The ``via`` to record for an answer whose client named ``claimed`` (or nothing).

        A browser session is always the web UI; a token client may pick one of
        ``TOKEN_SURFACES``. Anything else is refused rather than quietly replaced, so a
        client learns its answer would have been mislabelled.
        """
        if claimed is None or claimed == self.surface:
            return self.surface
        if not self.by_session and claimed in TOKEN_SURFACES:
            return claimed
        allowed = sorted(TOKEN_SURFACES) if not self.by_session else [self.surface]
        raise InvalidInput(
            f"{claimed!r} is not a surface this client may answer from.",
            code="invalid_via",
            hint="Leave 'via' out, or send one of: " + ", ".join(allowed) + ".",
        )


class SignedCookieSessions(SecureCookieSessionInterface):
    """Quart's signed cookie sessions, with the signer made once per set of keys. Quart
    builds it for every request and WebSocket, and building one serialises a test value
    (itsdangerous checks what its serializer returns): 8 % of the hub's CPU in a storm of
    2,000 agents' sockets, none of which carries a session."""

    def __init__(self) -> None:
        self._keys: tuple[object, ...] | None = None
        self._signer: URLSafeTimedSerializer | None = None

    def get_signing_serializer(self, app: Quart) -> URLSafeTimedSerializer | None:
        keys = (app.secret_key, *(app.config["SECRET_KEY_FALLBACKS"] or ()))
        if keys != self._keys:
            self._keys, self._signer = keys, super().get_signing_serializer(app)
        return self._signer


def init_app(app: Quart, *, public_url: str) -> None:
    app.session_interface = SignedCookieSessions()
    app.config.update(
        SESSION_COOKIE_NAME=SESSION_COOKIE_NAME,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=public_url.startswith("https://"),
        PERMANENT_SESSION_LIFETIME=SESSION_LIFETIME,
        LINEUP_PUBLIC_HOST=urlsplit(public_url).netloc.lower(),
    )


async def start_session(user: User, *, via: str) -> None:
    """A fresh session for ``user`` (nothing from before survives: no fixation), recorded
    in the audit trail. ``via``: ``web`` for the pages, ``api`` for the JSON API."""
    session.clear()
    g.pop("lineup_signed_in", None)
    session[SESSION_KEY] = await open_session(user, user_agent=request.headers.get("User-Agent"))
    session.permanent = True
    await record_sign_in(user, address=client_address(), via=via)


async def end_session(*, via: str) -> None:
    """End this browser's session for real: a copy of its cookie no longer signs anyone in."""
    key = session.get(SESSION_KEY)
    session.clear()
    g.pop("lineup_signed_in", None)
    user = await close_session(key) if isinstance(key, str) else None
    if user is not None:  # ending no session is a no-op, not an entry
        await record_sign_out(user, address=client_address(), via=via)


async def session_signed_in() -> SignedIn | None:
    """Whom this request's session cookie signs in, if its session is still open; looked up
    once per request (a WebSocket's ``caller_again`` looks again). Its ``session_id`` is the
    one to keep when a person ends their other sessions (``end_sessions``)."""
    if "lineup_signed_in" not in g:
        key = session.get(SESSION_KEY)
        g.lineup_signed_in = await signed_in(key) if isinstance(key, str) else None
    found: SignedIn | None = g.lineup_signed_in
    return found


async def current_caller() -> Caller:
    """The authenticated caller of this request or WebSocket; ``Unauthorized`` if none."""
    cached: Caller | None = g.get("lineup_caller")
    if cached is not None:
        return cached
    connection = request if has_request_context() else websocket
    scheme, _, credential = connection.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credential.strip():
        source = client_address()
        TOKEN_FAILURES.check(source)
        try:
            user = await user_for_token(credential.strip())
        except Unauthorized:
            TOKEN_FAILURES.record_failure(source)
            raise
        caller = Caller(user, by_session=False)
    else:
        caller = Caller(await _session_user(), by_session=True)
        is_websocket = not has_request_context()
        if is_websocket or request.method not in _SAFE_METHODS:
            _require_same_origin(
                connection.headers.get("Origin"),
                {connection.host.lower(), current_app.config["LINEUP_PUBLIC_HOST"]},
            )
    g.lineup_caller = caller
    return caller


async def caller_again() -> Caller:
    """The caller of this WebSocket, looked up anew: a socket outlives the moment it opened,
    and its token may have been revoked since (``Unauthorized`` then)."""
    g.pop("lineup_caller", None)
    g.pop("lineup_signed_in", None)
    return await current_caller()


async def member_of(workspace_id: str, *, write: bool = False) -> tuple[Caller, Membership]:
    """The caller and their membership of ``workspace_id``.

    Another person's workspace reads as not found (ids cannot be probed). ``write`` refuses
    viewers: they may look, not act.
    """
    caller = await current_caller()
    memberships: dict[str, Membership] = g.setdefault("lineup_memberships", {})
    membership = memberships.get(workspace_id)
    if membership is None:
        membership = await require_membership(caller.user, workspace_id)
        memberships[workspace_id] = membership
    if write and membership.role == Role.VIEWER:
        raise Forbidden(
            "Viewers of a workspace can look but not act.",
            code="read_only_member",
            hint="Ask an owner of the workspace to make you a member.",
        )
    return caller, membership


async def _session_user() -> User:
    found = await session_signed_in()
    if found is None:
        raise Unauthorized(
            "Sign in first, or send a personal API token as a bearer token.",
            code="not_signed_in",
        )
    return found.user


def _require_same_origin(origin: str | None, own_hosts: set[str]) -> None:
    """``own_hosts``: the Host the request came to, and the public URL's (behind a proxy
    the two may differ)."""
    if origin is None:
        return  # not a browser, or a same-origin request from one that omits it
    if urlsplit(origin).netloc.lower() not in own_hosts:
        raise Forbidden(
            "This request came from another site.",
            code="cross_site_request",
            hint="Use the hub's own pages, or call the API with a bearer token.",
        )
