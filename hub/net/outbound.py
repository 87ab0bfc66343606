"""The guard on outbound calls to addresses people type in (A2A agents, webhooks).

A URL someone pastes into the hub makes the hub's machine send requests, so without a guard
it could reach what only that machine can: its own admin ports, cloud metadata at
169.254.169.254, the private network (server-side request forgery). Every outbound request
goes through ``GuardedTransport``, which resolves the host right before connecting and
refuses it unless every address it resolves to is public. ``allow_private``
(``LINEUP_OUTBOUND_ALLOW_PRIVATE``) lifts that for hubs whose agents live on the same
machine or network, and for tests.

Checking on every request, not only when a URL is added, covers what the first answer points
to later: the endpoint an agent card names, a redirect, a DNS record that changed. A DNS
answer that changes between this check and the connection (rebinding with a zero TTL) can
still slip through; pinning the address would need rewriting the URL and breaks TLS name
checks, so the check runs as late as httpx allows instead.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx

from hub.core.errors import InvalidInput

ALLOWED_SCHEMES = frozenset({"http", "https"})
MAX_URL_LENGTH = 2000


class OutboundRefused(InvalidInput):
    code = "outbound_address_refused"
    hint = (
        "Use the agent's public https address. If it really runs on this machine or your "
        "private network, the hub's operator can allow that with "
        "LINEUP_OUTBOUND_ALLOW_PRIVATE=true."
    )


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone index
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def check_outbound_url(url: str, *, allow_private: bool) -> None:
    """Raise ``OutboundRefused`` unless ``url`` is http(s) to a host the hub may call."""
    if len(url) > MAX_URL_LENGTH:
        raise OutboundRefused(f"The address is longer than {MAX_URL_LENGTH} characters.")
    parts = urlsplit(url)
    if parts.scheme not in ALLOWED_SCHEMES or not parts.hostname:
        raise OutboundRefused(
            f"{url[:200]!r} is not an http:// or https:// address.",
            hint="Give the agent's address, like https://agent.example.com.",
        )
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise OutboundRefused(f"{url[:200]!r} has an invalid port.") from None
    try:
        resolved = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise OutboundRefused(
            f"The host {host!r} cannot be resolved: {error.strerror or error}.",
            code="outbound_host_unknown",
            hint="Check the address for typos.",
        ) from None
    if allow_private:
        return
    private = sorted({str(info[4][0]) for info in resolved if not _is_public(str(info[4][0]))})
    if private:
        raise OutboundRefused(
            f"{host} resolves to a loopback or private address ({', '.join(private[:3])}); "
            "the hub does not call those."
        )


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that checks each request's address before sending it."""

    def __init__(self, *, allow_private: bool, **transport_options: Any) -> None:
        self.allow_private = allow_private
        self._inner = httpx.AsyncHTTPTransport(**transport_options)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await check_outbound_url(str(request.url), allow_private=self.allow_private)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def guarded_http_client(
    *,
    allow_private: bool,
    timeout: float = 30.0,
    headers: dict[str, str] | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every request passes ``check_outbound_url``.

    Redirects are not followed: each hop would be checked, but an agent that redirects its
    API is more likely misconfigured or hostile than helpful.
    """
    return httpx.AsyncClient(
        transport=GuardedTransport(allow_private=allow_private),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        headers=headers,
        follow_redirects=False,
    )


__all__ = ["OutboundRefused", "check_outbound_url", "guarded_http_client"]
