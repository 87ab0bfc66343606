"""The hub's settings as the app holds them, for every part attached to it.

``create_app`` puts the loaded ``Settings`` in the app's config; the web surface, channels
and plugins read them back with ``settings_of(app)`` (or ``current_app`` in a request).
"""

from __future__ import annotations

from quart import Quart

from hub.config import Settings

SETTINGS_KEY = "LINEUP"  # app.config[SETTINGS_KEY]: the hub's Settings


def settings_of(app: Quart) -> Settings:
    settings: Settings = app.config[SETTINGS_KEY]
    return settings


__all__ = ["SETTINGS_KEY", "settings_of"]
