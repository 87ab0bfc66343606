"""Email link secrets never reach the log: a card mailed with signed links, the links
opened (GET) and used (POST), all at DEBUG — and no link token appears in what was logged."""

from __future__ import annotations

import logging
import re

import pytest

from tests.channels.conftest import eventually, make_hub  # noqa: F401 - fixtures
from tests.channels.peers import SmtpPeer


async def test_email_link_secrets_are_never_logged(
    make_hub,  # noqa: F811
    smtp: SmtpPeer,
    caplog: pytest.LogCaptureFixture,
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    async with make_hub(smtp_url=smtp.url) as hub:
        await hub.ask(description="Schema change", impact="5 min downtime")
        mail = (await eventually(lambda: smtp.to("owner@example.com")))[0]
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None
        paths = re.findall(r"http://hub\.test(/a/[\w.\-]+)", plain.get_content())
        assert len(paths) == 2
        approve, _ = paths
        assert (await hub.client.get(approve)).status_code == 200
        assert (await hub.client.post(approve, form={})).status_code == 200
    tokens = [path.removeprefix("/a/") for path in paths]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged, "nothing was logged at all"
    assert not [token for token in tokens if token in logged]
