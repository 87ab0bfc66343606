"""The A2A connector: remote agents reached over Google's A2A protocol, as agents of the hub.

A plugin like any other (``lineup.plugins`` entry point), off unless ``LINEUP_A2A_ENABLED``.
The hub is the A2A client: a person adds a remote agent by URL (``POST
/api/v1/workspaces/{ws}/remote-agents``) or the operator pins it (``LINEUP_A2A_PINNED``);
it then appears with runtime ``a2a`` and takes tasks like a local agent. Only agents added
or pinned ever appear (seed 003): the connector never lists a registry. A remote whose
card offers push notifications posts its tasks' changes to ``/a2a/push/{task}``
(``webhook``), which makes the hub read the task instead of polling it (``updates``).

Needs the ``a2a`` extra (``pip install 'lineup-hub[a2a]'``) when enabled; a hub with the
connector off does not import the SDK at all.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from quart import Quart

from hub.core.agents.remote import REMOTE_AGENTS_EXTENSION
from hub.core.errors import ConfigurationError
from hub.core.log.bus import DEFAULT_BUS
from hub.host.settings import settings_of


def init_app(app: Quart) -> None:
    settings = settings_of(app)
    if not settings.a2a_enabled:
        return
    try:
        from plugins.a2a_connector.connector import Connector
    except ImportError as error:
        raise ConfigurationError(
            f"LINEUP_A2A_ENABLED is on but the A2A SDK is missing ({error}).",
            hint="Install the extra: pip install 'lineup-hub[a2a]', or turn the connector off.",
        ) from None
    from plugins.a2a_connector.webhook import push_blueprint

    connector = Connector(settings)
    app.extensions[REMOTE_AGENTS_EXTENSION] = connector
    # Registered whether or not pushes are asked for: a remote may still hold the webhook
    # of a task from before they were turned off, and its pushes are still hints.
    app.register_blueprint(push_blueprint(settings.secret_key, connector.pushed))

    @app.while_serving
    async def _run_connector() -> AsyncGenerator[None, None]:
        DEFAULT_BUS.add_listener(connector.on_event)
        connector.start()
        yield
        DEFAULT_BUS.remove_listener(connector.on_event)
        await connector.stop()


__all__ = ["init_app"]
