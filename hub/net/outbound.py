"""The guard on outbound calls to addresses people type in (A2A agents, webhooks).

A URL someone pastes into the hub makes the hub's machine send requests, so without a guard
it could reach what only that machine can: its own admin ports, cloud metadata at
169.254.169.254, the private network (server-side request forgery). Every outbound request
goes through ``GuardedTransport``, whose connections resolve the host once, refuse it unless
every address it resolves to is public, and connect to the address that was checked
(``PinnedBackend``): a DNS answer that changes between a check and a connection (rebinding
with a zero TTL) has no second lookup to change. TLS still names the host (SNI and the
certificate check), and the Host header is the URL's. ``allow_private``
(``LINEUP_OUTBOUND_ALLOW_PRIVATE``) lifts the check for hubs whose agents live on the same
machine or network, and for tests.

Checking on every connection, not only when a URL is added, covers what the first answer
points to later: the endpoint an agent card names, a redirect, a DNS record that changed.
An IPv6 address that carries an IPv4 one (IPv4-mapped and -compatible, NAT64, 6to4) is
judged by the IPv4 address inside: ``64:ff9b::127.0.0.1`` reaches loopback through a NAT64
gateway as surely as ``127.0.0.1`` does.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

import httpcore
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


# IPv6 forms whose last 32 bits are an IPv4 address the packet ends up at: NAT64's
# well-known prefix (RFC 6052), IPv4-compatible (deprecated, RFC 4291) and IPv4-translated
# (RFC 2765) addresses. IPv4-mapped and 6to4 have their own properties in ``ipaddress``.
_CARRY_IPV4_LAST = (
    ipaddress.IPv6Network("64:ff9b::/96"),
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
)
# NAT64 for a network's own use (RFC 8215): it translates into that network, so it is
# private whatever IPv4 address it carries, and where it carries it depends on the prefix.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries and would reach, or None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in network for network in _CARRY_IPV4_LAST):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """Whether the hub may call ``address`` (an IP address, with or without a zone index)."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone index
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return False
        ip = embedded_ipv4(ip) or ip
    return ip.is_global and not ip.is_multicast


async def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order of preference."""
    answers = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in answers))


async def checked_addresses(host: str, port: int, *, allow_private: bool) -> list[str]:
    """``host``'s addresses once every one may be called; raises ``OutboundRefused``."""
    try:
        addresses = await resolve(host, port)
    except OSError as error:
        raise OutboundRefused(
            f"The host {host!r} cannot be resolved: {error.strerror or error}.",
            code="outbound_host_unknown",
            hint="Check the address for typos.",
        ) from None
    if not addresses:
        raise OutboundRefused(
            f"The host {host!r} resolves to no address.",
            code="outbound_host_unknown",
            hint="Check the address for typos.",
        )
    private = sorted({a for a in addresses if not is_public(a)})
    if private and not allow_private:
        raise OutboundRefused(
            f"{host} resolves to a loopback or private address ({', '.join(private[:3])}); "
            "the hub does not call those."
        )
    return addresses


def _checked_shape(url: str) -> tuple[str, int]:
    """The host and port of ``url`` once it is an http(s) URL of a sane length."""
    if len(url) > MAX_URL_LENGTH:
        raise OutboundRefused(f"The address is longer than {MAX_URL_LENGTH} characters.")
    parts = urlsplit(url)
    if parts.scheme not in ALLOWED_SCHEMES or not parts.hostname:
        raise OutboundRefused(
            f"{url[:200]!r} is not an http:// or https:// address.",
            hint="Give the agent's address, like https://agent.example.com.",
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise OutboundRefused(f"{url[:200]!r} has an invalid port.") from None
    return parts.hostname, port


async def check_outbound_url(url: str, *, allow_private: bool) -> None:
    """Raise ``OutboundRefused`` unless ``url`` is http(s) to a host the hub may call.

    For a URL someone gives, so they learn at once what is wrong with it; the requests made
    to it later are checked again, as they connect (``GuardedTransport``)."""
    host, port = _checked_shape(url)
    await checked_addresses(host, port, allow_private=allow_private)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting to the address it checked and to no other.

    httpcore hands ``connect_tcp`` the URL's host; this resolves it once, checks every
    address, and opens the TCP connection to one of them by number (the first that
    answers), so nothing resolves the name again. TLS is started afterwards on that stream
    with the host's name, so the certificate is still checked against the name."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend, *, allow_private: bool) -> None:
        self._inner = inner
        self.allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        try:  # the lookup is part of connecting, so the connect timeout bounds it too
            async with asyncio.timeout(timeout):
                addresses = await checked_addresses(host, port, allow_private=self.allow_private)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} took too long") from None
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:  # in the resolver's order, as a plain connect would
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = error
        assert failure is not None  # checked_addresses returns at least one
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        raise OutboundRefused("Outbound calls go over TCP only.")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def default_tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's roots, the host name checked), made once and
    shared: making one reads the whole CA bundle (60 ms here), which every guarded client
    paid, so every step of a remote call did (a read after a push among them)."""
    return httpx.create_ssl_context()


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose connections go only to addresses the guard checked."""

    def __init__(self, *, allow_private: bool, **transport_options: Any) -> None:
        self.allow_private = allow_private
        transport_options.setdefault("verify", default_tls_context())
        self._inner = httpx.AsyncHTTPTransport(**transport_options)
        # httpx takes no network backend, so the one of the pool it built is wrapped; the
        # pool (no proxy is configured) is httpcore's, which makes every connection there.
        pool = self._inner._pool
        if not isinstance(pool, httpcore.AsyncConnectionPool):
            raise TypeError(f"unexpected httpx connection pool {type(pool).__name__}")
        pool._network_backend = PinnedBackend(pool._network_backend, allow_private=allow_private)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _checked_shape(str(request.url))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


def guarded_http_client(
    *,
    allow_private: bool,
    timeout: float = 30.0,
    headers: dict[str, str] | None = None,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every connection goes only to an address the guard
    checked (``GuardedTransport``).

    Redirects are not followed: each hop would be checked, but an agent that redirects its
    API is more likely misconfigured or hostile than helpful.
    """
    return httpx.AsyncClient(
        transport=GuardedTransport(allow_private=allow_private),
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        headers=headers,
        follow_redirects=False,
    )


__all__ = [
    "OutboundRefused",
    "PinnedBackend",
    "check_outbound_url",
    "embedded_ipv4",
    "guarded_http_client",
    "is_public",
]
