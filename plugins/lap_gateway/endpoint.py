"""The WebSocket route ``/lap/v0.1``: authenticate the upgrade, then hand over to a session.

A bearer credential is checked before the upgrade: an unknown or revoked one is refused
with HTTP 401 and the JSON error body of the API (code, message, next step), so nothing is
opened for it. Without a credential the socket is opened for pairing.
"""

from __future__ import annotations

from quart import Blueprint, Response, websocket

from hub.core.agents.registry import agent_for_credential
from hub.core.errors import HubError, Unauthorized
from hub.core.store.models import Agent
from hub.host.client_address import client_address
from hub.host.errors import error_response
from hub.protocol.lap import ENDPOINT_PATH
from plugins.lap_gateway.gateway import Gateway
from plugins.lap_gateway.session import AgentSession


def bearer_credential(authorization: str) -> str | None:
    if not authorization:
        return None
    scheme, _, credential = authorization.partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise Unauthorized(
            "The Authorization header must be 'Bearer <credential>'.",
            code="invalid_authorization",
            hint="Send the agent credential as 'Authorization: Bearer <credential>', or "
            "none at all to pair with a code.",
        )
    return credential.strip()


def lap_blueprint(gateway: Gateway) -> Blueprint:
    blueprint = Blueprint("lap_gateway", __name__)

    @blueprint.websocket(ENDPOINT_PATH)
    async def lap() -> Response | None:
        agent: Agent | None = None
        try:
            credential = bearer_credential(websocket.headers.get("Authorization", ""))
            if credential is not None:
                agent = await agent_for_credential(credential)
        except HubError as error:
            return error_response(error)
        await websocket.accept()
        session = AgentSession(
            gateway,
            websocket._get_current_object(),  # type: ignore[attr-defined]
            agent,
            source=client_address(),
        )
        await session.run()
        return None

    return blueprint
