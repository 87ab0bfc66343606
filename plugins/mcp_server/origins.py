"""Which web pages may call ``/mcp/`` from a browser: the hub's own, and those configured.

The MCP transports require a server to check ``Origin``: a page on another site (or a DNS
rebinding attack, which makes a hostile page look same-host) must not reach an MCP server
through a visitor's browser. A bearer credential already keeps such a page out, since it
cannot read it; checking ``Origin`` as well refuses the request before anything is looked
up, and is what the specification asks. Clients that are not browsers send no ``Origin``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from hub.config import Settings
from hub.core.errors import Forbidden

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalised_origin(url: str) -> str | None:
    """``scheme://host[:port]`` of ``url``, lower case, default port left out; None when
    ``url`` is not an http(s) origin (``null``, say)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + (f":{port}" if port and port != _DEFAULT_PORTS[scheme] else "")


class AllowedOrigins:
    def __init__(self, settings: Settings) -> None:
        configured = [o for o in settings.mcp_allowed_origins.split(",") if o.strip()]
        allowed = {normalised_origin(o) for o in [settings.resolved_public_url, *configured]}
        self.allowed = {o for o in allowed if o is not None}

    def check(self, origin: str | None) -> None:
        """Raise ``Forbidden`` (``origin_not_allowed``) for an ``Origin`` not allowed."""
        if origin is None or normalised_origin(origin) in self.allowed:
            return
        raise Forbidden(
            f"MCP at /mcp/ does not take requests from pages of {origin[:200]!r}.",
            code="origin_not_allowed",
            hint="Call it from the hub's own pages or from a client that is not a browser; "
            "to allow a web client, add its origin to LINEUP_MCP_ALLOWED_ORIGINS.",
        )
