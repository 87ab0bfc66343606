"""The app host: settings as the app holds them, lifecycle hooks, the error body, the
security headers, who is calling, health and the request guards every surface shares.

The people's surface (``hub.web``), the channels and the plugins are attached to it by the
factory, ``hub.host.app.create_app``. This package does not import the factory, so a plugin
that reaches the host (``from hub.host import settings_of``) never reaches the surfaces.
"""

from __future__ import annotations

from hub.host.errors import error_response
from hub.host.headers import hardened_send
from hub.host.lifecycle import SERVICE_RESTART, on_shutdown_requested, shutdown_requested
from hub.host.settings import settings_of

__all__ = [
    "SERVICE_RESTART",
    "error_response",
    "hardened_send",
    "on_shutdown_requested",
    "settings_of",
    "shutdown_requested",
]
