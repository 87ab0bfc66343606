"""The hub as an installable app: its web app manifest and its service worker.

Both are served from the root, not ``/static/``: a service worker controls only the pages
below its own path, and the app is the whole hub. Neither needs a session (browsers fetch
the manifest without credentials) and neither holds anything of a person's.

The worker (``static/service-worker.js``) keeps the app's shell (its styles, scripts and
icons, and the last inbox opened) so the inbox opens even when the hub cannot be reached,
and says so honestly then; it turns pushes into notifications (``hub.channels.push``).
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, current_app, render_template, url_for

from hub.web.pages.i18n import gettext as _

blueprint = Blueprint("pwa", __name__)

THEME_COLOUR = "#356ae6"  # --brand in static/tokens.css
BACKGROUND_COLOUR = "#f7f8fa"  # --surface-canvas


@blueprint.get("/manifest.webmanifest")
async def manifest() -> Response:
    def icon(name: str, size: int, purpose: str) -> dict[str, Any]:
        return {
            "src": url_for("static", filename=f"icons/{name}-{size}.png"),
            "sizes": f"{size}x{size}",
            "type": "image/png",
            "purpose": purpose,
        }

    document = {
        "id": "/",
        "name": "LineUp Hub",
        "short_name": "LineUp",
        "description": _("Answer your agents' questions from anywhere."),
        "start_url": "/",  # the person's inbox
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOUR,
        "background_color": BACKGROUND_COLOUR,
        "icons": [
            icon("icon", 192, "any"),
            icon("icon", 512, "any"),
            icon("maskable", 192, "maskable"),
            icon("maskable", 512, "maskable"),
        ],
    }
    response = current_app.response_class(
        current_app.json.dumps(document), mimetype="application/manifest+json"
    )
    response.cache_control.no_cache = True
    return response


@blueprint.get("/service-worker.js")
async def service_worker() -> Response:
    response = await current_app.send_static_file("service-worker.js")
    response.mimetype = "text/javascript"
    # A browser checks for a new worker on each navigation; no-cache keeps that check real.
    response.cache_control.no_cache = True
    response.cache_control.max_age = 0
    return response


@blueprint.get("/offline")
async def offline() -> str:
    """What the installed app shows when the hub cannot be reached and no inbox was kept."""
    return await render_template("pages/offline.html")
