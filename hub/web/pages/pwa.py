"""The hub as an installable app: its web app manifest and its service worker.

Both are served from the root, not ``/static/``: a service worker controls only the pages
below its own path, and the app is the whole hub. Neither needs a session (browsers fetch
the manifest without credentials) and neither holds anything of a person's.

The worker (``static/service-worker.js``) keeps the app's shell (its styles, scripts and
icons) so the installed app opens at once, and the last inbox opened, shown when the hub
cannot be reached, saying so; it turns pushes into notifications (``hub.channels.push``).
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from quart import Blueprint, Response, current_app, url_for

from hub.host.templates import render_template
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


# The hub's files the worker keeps, beside the offline page; their digest names its cache.
SHELL_FILES = (
    "tokens.css",
    "app.css",
    "app.js",
    "live.js",
    "inbox.js",
    "icons/icon-192.png",
    "icons/badge-96.png",
)


@functools.cache
def _worker_source(static_folder: str) -> str:
    """The worker as served: the list of the shell's files, and its cache named after their
    digest, so that changed files make a changed worker, which the browser installs,
    keeping the new files."""
    folder = Path(static_folder)
    digest = hashlib.sha256()
    for name in SHELL_FILES:
        digest.update((folder / name).read_bytes())
    kept = ["/offline", *(f"/static/{name}" for name in SHELL_FILES)]
    source = (folder / "service-worker.js").read_text()
    source = source.replace("SHELL_FILES_LIST", json.dumps(kept))
    return source.replace("SHELL_DIGEST", digest.hexdigest()[:16])


@blueprint.get("/service-worker.js")
async def service_worker() -> Response:
    source = _worker_source(str(current_app.static_folder))
    response = current_app.response_class(source, mimetype="text/javascript")
    # A browser checks for a new worker on each navigation; no-cache keeps that check real.
    response.cache_control.no_cache = True
    response.cache_control.max_age = 0
    return response


@blueprint.get("/offline")
async def offline() -> str:
    """What the installed app shows when the hub cannot be reached and no inbox was kept."""
    return await render_template("pages/offline.html")
