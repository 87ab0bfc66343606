"""An a2a-sdk client for one remote agent, built from its stored card, through the guard.

The stored card (not a fresh fetch) decides the endpoint and the protocol generation, so a
card that changes later cannot silently redirect in-flight tasks. The SDK speaks v1.0
(PascalCase methods, ``A2A-Version: 1.0``) or v0.3 (``message/send``, ``tasks/get``)
according to the interface's ``protocolVersion``. Every request passes the outbound guard.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2a.client import Client, ClientConfig, create_client
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface

from hub.core.store.remote_models import RemoteAgent
from hub.net import guarded_http_client

CALL_TIMEOUT_S = 60.0


def auth_headers(auth_scheme: str, secret: str | None) -> dict[str, str]:
    if not secret:
        return {}
    if auth_scheme == "bearer":
        return {"Authorization": f"Bearer {secret}"}
    if auth_scheme.startswith("header:"):
        return {auth_scheme.removeprefix("header:"): secret}
    return {}


@asynccontextmanager
async def remote_client(
    remote: RemoteAgent, *, secret: str | None, allow_private: bool, streaming: bool | None = None
) -> AsyncIterator[Client]:
    card = AgentCard(
        name=remote.card.get("name") or remote.id,
        version=remote.card.get("version") or "",
        capabilities=AgentCapabilities(streaming=remote.streaming),
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC",
                url=remote.endpoint_url,
                protocol_version=remote.protocol_version,
            )
        ],
    )
    http = guarded_http_client(
        allow_private=allow_private,
        timeout=CALL_TIMEOUT_S,
        headers=auth_headers(remote.auth_scheme, secret),
    )
    async with http:
        config = ClientConfig(
            httpx_client=http,
            streaming=remote.streaming if streaming is None else streaming,
            polling=not remote.streaming,
        )
        client = await create_client(card, client_config=config)
        try:
            yield client
        finally:
            await client.close()


__all__ = ["auth_headers", "remote_client"]
