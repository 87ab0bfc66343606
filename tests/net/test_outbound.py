"""The outbound guard: no loopback, private or link-local targets unless allowed."""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.net import OutboundRefused, check_outbound_url, guarded_http_client, outbound
from hub.net.outbound import is_public

REFUSED = [
    "http://127.0.0.1:8000/",
    "http://localhost/",
    "http://[::1]/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.10/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:127.0.0.1]/",
    "http://[fd00::1]/",
    "http://0.0.0.0/",
    "http://100.64.0.1/",
]


@pytest.mark.parametrize("url", REFUSED)
async def test_private_targets_are_refused_with_a_clear_error(url: str) -> None:
    with pytest.raises(OutboundRefused) as refused:
        await check_outbound_url(url, allow_private=False)
    assert refused.value.code == "outbound_address_refused"
    assert "LINEUP_OUTBOUND_ALLOW_PRIVATE" in refused.value.hint


@pytest.mark.parametrize("url", REFUSED[:3])
async def test_allow_private_lets_them_through(url: str) -> None:
    await check_outbound_url(url, allow_private=True)


async def test_public_addresses_pass() -> None:
    # Literal addresses: no DNS query, so the test stays offline.
    await check_outbound_url("https://8.8.8.8/agent", allow_private=False)
    await check_outbound_url("https://[2606:4700:4700::1111]/", allow_private=False)


@pytest.mark.parametrize(
    "url", ["ftp://8.8.8.8/", "file:///etc/passwd", "javascript:alert(1)", "http:///x", "x" * 3000]
)
async def test_only_http_urls_are_called(url: str) -> None:
    with pytest.raises(OutboundRefused):
        await check_outbound_url(url, allow_private=True)


async def test_every_request_of_the_client_is_checked() -> None:
    async with guarded_http_client(allow_private=False) as client:
        with pytest.raises(OutboundRefused):
            await client.get("http://127.0.0.1:9/")


# IPv6 forms that carry a private IPv4 address, reaching it through a translator or tunnel.
CARRYING_PRIVATE = [
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    "64:ff9b:1::a00:1",  # local-use NAT64, into the network's own addresses
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:c0a8:10a::",  # 6to4 of 192.168.1.10
    "::7f00:1",  # IPv4-compatible 127.0.0.1
    "::a00:1",  # IPv4-compatible 10.0.0.1
    "::ffff:a9fe:a9fe",  # IPv4-mapped 169.254.169.254
    "::ffff:0:a00:1",  # IPv4-translated 10.0.0.1
]
CARRYING_PUBLIC = ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8"]


@pytest.mark.parametrize("address", CARRYING_PRIVATE)
async def test_ipv6_forms_of_private_ipv4_addresses_are_refused(address: str) -> None:
    assert not is_public(address)
    with pytest.raises(OutboundRefused):
        await check_outbound_url(f"http://[{address}]/", allow_private=False)


@pytest.mark.parametrize("address", CARRYING_PUBLIC)
def test_ipv6_forms_of_public_ipv4_addresses_pass(address: str) -> None:
    assert is_public(address)


class Listener:
    """An HTTP server on one loopback address that counts the connections it is given."""

    def __init__(self, host: str) -> None:
        self.host, self.connections = host, 0
        self.server: asyncio.Server | None = None

    async def start(self, port: int = 0, tls: ssl.SSLContext | None = None) -> int:
        self.server = await asyncio.start_server(self._serve, self.host, port, ssl=tls)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await reader.readuntil(b"\r\n\r\n")
        body = self.host.encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


NAME = "agent.rebind.test"


def rebinding_resolver(monkeypatch: pytest.MonkeyPatch, asked: list[str]) -> None:
    """``NAME`` resolves to 127.0.0.2 once, then to 127.0.0.1; 127.0.0.2 stands in for a
    public address, so that no packet leaves the machine."""
    loop = asyncio.get_running_loop()
    real_getaddrinfo = loop.getaddrinfo
    answers = iter(["127.0.0.2"])  # then 127.0.0.1 for every later question

    async def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAME:
            return await real_getaddrinfo(host, port, *args, **kwargs)
        address = next(answers, "127.0.0.1")
        asked.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port)))]

    monkeypatch.setattr(loop, "getaddrinfo", rebinding)
    monkeypatch.setattr(outbound, "is_public", lambda address: address == "127.0.0.2")


async def test_a_name_that_rebinds_to_loopback_is_not_connected_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The name answers an address the guard allows first, loopback after: the request must
    go to the first, whichever code path would have asked again."""
    asked: list[str] = []
    rebinding_resolver(monkeypatch, asked)
    stand_in, loopback = Listener("127.0.0.2"), Listener("127.0.0.1")
    port = await loopback.start()
    await stand_in.start(port)
    try:
        async with guarded_http_client(allow_private=False, timeout=10) as client:
            response = await client.get(f"http://{NAME}:{port}/")
    finally:
        await stand_in.stop()
        await loopback.stop()
    assert loopback.connections == 0, f"connected to loopback after answers {asked}"
    assert (response.text, stand_in.connections) == ("127.0.0.2", 1)
    assert response.request.headers["host"] == f"{NAME}:{port}"


def certificate_for(name: str, directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A self-signed certificate naming ``name`` only (no IP address): the server's TLS
    context, and a client's that trusts that certificate and checks names."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return server, client


async def test_a_pinned_tls_connection_still_checks_the_certificate_against_the_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked: list[str] = []
    rebinding_resolver(monkeypatch, asked)
    server_tls, client_tls = certificate_for(NAME, tmp_path)
    stand_in, loopback = Listener("127.0.0.2"), Listener("127.0.0.1")
    port = await stand_in.start(tls=server_tls)
    await loopback.start(port, tls=server_tls)
    transport = outbound.GuardedTransport(allow_private=False, verify=client_tls)
    try:
        async with httpx.AsyncClient(transport=transport, timeout=10) as client:
            response = await client.get(f"https://{NAME}:{port}/")
            assert response.text == "127.0.0.2"
        # The same server under a name its certificate does not hold is refused.
        wrong = outbound.GuardedTransport(allow_private=False, verify=client_tls)
        async with httpx.AsyncClient(transport=wrong, timeout=10) as client:
            monkeypatch.setattr(outbound, "is_public", lambda address: True)
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await client.get(f"https://localhost:{port}/")
    finally:
        await stand_in.stop()
        await loopback.stop()
    assert asked == ["127.0.0.2"]
