"""The web UI: server-rendered pages, one module per area of spec §6.

Pages call the core's services directly; live updates come from the browser WebSocket
(``/ws/client``) in ``static/live.js``. Each module owns a blueprint nested under
``pages``, so endpoints read ``pages.<area>.<view>``.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Quart, Response, request
from werkzeug.exceptions import Forbidden, NotFound

from hub.core.errors import HubError
from hub.host.errors import http_error_response
from hub.host.headers import harden
from hub.host.templates import render_template
from hub.web.pages import (
    accounts,
    agents,
    batches,
    conversations,
    feishu_link,
    hub_accounts,
    i18n,
    inbox,
    interactions,
    members,
    password_reset,
    policy_rules,
    push_devices,
    pwa,
    remote_agents,
    search,
    session,
    settings,
    slack_link,
    tasks,
    telegram_link,
    two_factor,
)
from hub.web.pages.error_messages import for_person, for_scripts

pages = Blueprint("pages", __name__)
for area in (
    accounts,
    inbox,
    conversations,
    tasks,
    batches,
    interactions,
    agents,
    remote_agents,
    search,
    settings,
    members,
    hub_accounts,
    password_reset,
    policy_rules,
    push_devices,
    pwa,
    slack_link,
    telegram_link,
    feishu_link,
    two_factor,
):
    pages.register_blueprint(area.blueprint)


@pages.before_request
async def _refuse_cross_site_posts() -> None:
    await session.check_csrf()


@pages.after_request
async def _harden(response: Response) -> Response:
    return harden(response)


@pages.errorhandler(HubError)
async def _hub_error(error: HubError) -> tuple[str, int]:
    html = await render_template("pages/error.html", error=for_person(error), status=error.status)
    return html, error.status


@pages.errorhandler(Forbidden)
async def _forbidden(error: Forbidden) -> tuple[str, int]:
    body = {
        "code": "csrf_refused",
        "message": error.description,
        "hint": i18n.gettext("Reload the page and send the form again."),
    }
    html = await render_template("pages/error.html", error=body, status=403)
    return html, 403


async def _no_page_here(error: NotFound) -> Any:
    """An address nothing answers: a page for a person's browser, the contract's JSON for
    the API and for clients that ask for JSON."""
    wants_html = request.accept_mimetypes.accept_html and not request.path.startswith("/api/")
    if not wants_html:
        return http_error_response(error)
    body = {
        "code": "not_found",
        "message": i18n.gettext("There is nothing at this address."),
        "hint": i18n.gettext("Check the link, or start again from your inbox."),
    }
    return await render_template("pages/error.html", error=body, status=404), 404


def init_app(app: Quart) -> None:
    # The session cookie itself is configured by hub.host.identity (shared with the API).
    i18n.init_app(app)
    app.jinja_env.globals["refusals_for_scripts"] = for_scripts
    session.init_app(app)
    app.register_blueprint(pages)
    app.register_error_handler(NotFound, _no_page_here)
