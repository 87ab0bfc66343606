"""Who is signed in, for the pages; CSRF protection of every form.

The session is the one ``hub.host.identity`` keeps for the JSON API and the client
WebSocket too (a hub-kept session whose key rides in Quart's signed cookie: HttpOnly,
SameSite=Lax, Secure behind HTTPS; signing out ends it everywhere), so
signing in on a page also signs in the page's scripts, and the other way round. The pages
add a CSRF token to it: every state-changing form carries the token and must also come
from this site's own origin when the browser says where it came from; a cross-site post is
refused before any handler runs.
"""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

from quart import Quart, g, redirect, request, session, url_for
from werkzeug.exceptions import Forbidden

from hub.core.store.models import User
from hub.host.identity import end_session, session_signed_in, start_session
from hub.web.pages.i18n import gettext as _

P = ParamSpec("P")
R = TypeVar("R")

SESSION_CSRF = "csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


async def current_user() -> User | None:
    """The signed-in person, looked up once per request."""
    if "user" not in g:
        found = await session_signed_in()
        g.user = found.user if found is not None else None
    user: User | None = g.user
    return user


async def login_user(user: User) -> None:
    # A fresh session on login: nothing from before (a planted CSRF token) survives it.
    await start_session(user, via="web")
    session[SESSION_CSRF] = secrets.token_urlsafe(32)
    g.user = user


async def logout_user() -> None:
    language, time_zone = session.get("lang"), session.get("tz")
    await end_session(via="web")
    # Language and time zone are about the browser's reader, not the account.
    if language:
        session["lang"] = language
    if time_zone:
        session["tz"] = time_zone
    g.user = None


def csrf_token() -> str:
    token = session.get(SESSION_CSRF)
    if not token:
        token = session[SESSION_CSRF] = secrets.token_urlsafe(32)
    return str(token)


async def check_csrf() -> None:
    """Refuse a state-changing request that is not a form of this site."""
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if origin and origin != "null" and urlsplit(origin).netloc != request.host:
        raise Forbidden(_("This form was posted from another site."))
    expected = session.get(SESSION_CSRF)
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        sent = (await request.form).get(CSRF_FIELD)
    if not expected or not sent or not hmac.compare_digest(str(expected), str(sent)):
        raise Forbidden(_("The form's security token is missing or out of date."))


def login_required(view: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[Any]]:
    """Send a logged-out visitor to the login page, then back to where they were going."""

    @functools.wraps(view)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        if await current_user() is None:
            wanted = request.full_path.rstrip("?") if request.method == "GET" else None
            return redirect(url_for("pages.accounts.login", next=wanted))
        return await view(*args, **kwargs)

    return wrapper


def safe_next(target: str | None, fallback: str) -> str:
    """Only same-site paths: an open redirect after login would be a phishing aid."""
    if target and target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return fallback


def init_app(app: Quart) -> None:
    # A global, not a context variable: imported macros (cards, forms) need it too.
    app.jinja_env.globals["csrf_token"] = csrf_token

    @app.context_processor
    async def _session_context() -> dict[str, Any]:
        return {"current_user": await current_user()}
