"""The API's docs page, ``/api/docs``, served entirely by the hub.

A self-hosted hub often has no route to a CDN, so Swagger UI comes from the
``swagger-ui-bundle`` package and is served from here. The page carries no inline script:
the Content-Security-Policy of the pages applies to it too, and its one line of set-up
lives in ``static/api-docs.js``.
"""

from __future__ import annotations

from pathlib import Path

from quart import Blueprint, Quart, Response, abort, send_from_directory, url_for
from quart_schema import hide

from hub.host.headers import harden

blueprint = Blueprint("api_docs", __name__)

_ASSETS = frozenset({"swagger-ui.css", "swagger-ui-bundle.js"})


def _swagger_directory() -> Path:
    import swagger_ui_bundle

    return Path(swagger_ui_bundle.swagger_ui_path)


@blueprint.get("/api/docs")
@hide
async def docs() -> Response:
    page = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>LineUp Hub API</title>
<link rel="stylesheet" href="{url_for("api_docs.asset", name="swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui" data-openapi="{url_for("openapi")}"></div>
<script src="{url_for("api_docs.asset", name="swagger-ui-bundle.js")}"></script>
<script src="{url_for("static", filename="api-docs.js")}"></script>
</body>
</html>
"""
    return harden(Response(page, content_type="text/html; charset=utf-8"))


@blueprint.get("/api/docs/assets/<name>")
@hide
async def asset(name: str) -> Response:
    if name not in _ASSETS:
        abort(404)
    response = await send_from_directory(_swagger_directory(), name)
    response.cache_control.max_age = 86400
    return harden(response)


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)
