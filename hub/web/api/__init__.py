"""The JSON API under ``/api/v1`` (the public contract's HTTP table), described by OpenAPI at
``/api/openapi.json`` with a docs page at ``/api/docs``.

One module per resource; each holds a blueprint. ``init_app`` attaches them and quart-schema
(which generates the OpenAPI document from the request models).
"""

from __future__ import annotations

from quart import Quart
from quart_schema import Info, QuartSchema

from hub.host import identity
from hub.web.api import (
    agents,
    audit,
    auth,
    channel_links,
    coding_agent_rules,
    conversations,
    decisions,
    events,
    inbox,
    interactions,
    members,
    notification_preferences,
    password_reset,
    policy_rules,
    push_subscriptions,
    remote_agents,
    search,
    tasks,
    two_factor,
    workspaces,
)
from hub.web.api.base import refuse_stray_parameters
from hub.web.api.openapi import HubOpenAPIProvider

BLUEPRINTS = (
    auth.blueprint,
    password_reset.blueprint,
    two_factor.blueprint,
    workspaces.blueprint,
    agents.blueprint,
    conversations.blueprint,
    tasks.blueprint,
    interactions.blueprint,
    decisions.blueprint,
    inbox.blueprint,
    events.blueprint,
    notification_preferences.blueprint,
    channel_links.blueprint,
    push_subscriptions.blueprint,
    remote_agents.blueprint,
    policy_rules.blueprint,
    coding_agent_rules.blueprint,
    audit.blueprint,
    members.blueprint,
    search.blueprint,
)


def init_app(app: Quart) -> None:
    QuartSchema(
        app,
        openapi_path="/api/openapi.json",
        swagger_ui_path=None,  # served offline by hub.web.api_docs
        redoc_ui_path=None,
        scalar_ui_path=None,
        info=Info(
            title="LineUp Hub API",
            version="1",
            description="Supervise the AI agents you run. Errors are "
            '`{"error": {"code", "message", "hint"}}`; writes accept an `Idempotency-Key` '
            "header so a retry returns the first result. Lists page: send `limit` and, for "
            "the next page, the `nextCursor` of the last one as `cursor` (`null` on the last "
            "page; a changed cursor is `400 bad_cursor`). A query parameter an operation does "
            "not list is refused with `400 unknown_parameter`, never ignored.",
        ),
        security_schemes={
            "token": {"type": "http", "scheme": "bearer"},
            "session": {"type": "apiKey", "in_": "cookie", "name": identity.SESSION_COOKIE_NAME},
        },
        security=[{"token": []}, {"session": []}],
        openapi_provider_class=HubOpenAPIProvider,
    )
    app.before_request(refuse_stray_parameters)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
