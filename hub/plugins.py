"""Plugins: agent connectors and channels found through the ``lineup.plugins`` entry points.

A plugin is any object (usually a module) with ``init_app(app)``. A distribution declares it
in its ``pyproject.toml``::

    [project.entry-points."lineup.plugins"]
    my_plugin = "my_package.my_plugin"

The hub's own plugins (the LAP gateway, ...) are declared the same way in the hub's
``pyproject.toml``, so they use nothing a third party could not.

Lifecycle: ``create_app`` calls ``load_plugins`` once, after the core's own parts are
attached and before serving starts. ``init_app`` registers blueprints and hooks; it must not
touch the database, which opens only when serving starts. Background work belongs in an
``app.while_serving`` generator: Quart runs it after every ``before_serving`` hook (the
database is open) and finishes it before any ``after_serving`` hook (the database is still
open), so a loop can be stopped and awaited before the pool closes.

Errors: a plugin that cannot be imported, or has no callable ``init_app``, stops the hub at
start with a ``ConfigurationError`` naming it: a hub silently missing its agent gateway
would be worse than one that does not start.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Protocol, runtime_checkable

from quart import Quart

from hub.core.errors import ConfigurationError

logger = logging.getLogger(__name__)

PLUGIN_GROUP = "lineup.plugins"
LOADED_KEY = "lineup.plugins"  # app.extensions[LOADED_KEY]: names of the loaded plugins


@runtime_checkable
class Plugin(Protocol):
    def init_app(self, app: Quart) -> None: ...


def discover_plugins() -> list[EntryPoint]:
    """The installed plugins' entry points, one per name, in name order."""
    unique: dict[str, EntryPoint] = {}
    for entry_point in entry_points(group=PLUGIN_GROUP):
        # An editable install can list a distribution twice; the first one wins.
        unique.setdefault(entry_point.name, entry_point)
    return [unique[name] for name in sorted(unique)]


def load_plugin(entry_point: EntryPoint) -> Plugin:
    try:
        plugin = entry_point.load()
    except Exception as error:
        raise ConfigurationError(
            f"Plugin {entry_point.name!r} ({entry_point.value}) failed to load: "
            f"{error.__class__.__name__}: {error}",
            hint="Install what the plugin needs (the error above names it), or uninstall "
            "the package that provides the plugin.",
        ) from error
    if not isinstance(plugin, Plugin) or not callable(plugin.init_app):
        raise ConfigurationError(
            f"Plugin {entry_point.name!r} ({entry_point.value}) has no init_app(app).",
            hint="A lineup.plugins entry point must name an object with init_app(app).",
        )
    return plugin


def load_plugins(app: Quart, found: Iterable[EntryPoint] | None = None) -> list[str]:
    """Let every plugin attach itself to ``app``; returns their names in load order."""
    loaded: list[str] = app.extensions.setdefault(LOADED_KEY, [])
    for entry_point in discover_plugins() if found is None else found:
        plugin = load_plugin(entry_point)
        plugin.init_app(app)
        loaded.append(entry_point.name)
        logger.debug("plugin %s loaded from %s", entry_point.name, entry_point.value)
    return loaded


__all__ = ["PLUGIN_GROUP", "Plugin", "discover_plugins", "load_plugin", "load_plugins"]
