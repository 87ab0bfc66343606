"""The outbound guard: no loopback, private or link-local targets unless allowed."""

from __future__ import annotations

import pytest

from hub.net import OutboundRefused, check_outbound_url, guarded_http_client

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
