"""The WebSocket route ``/lap/v0.1``: authenticate the upgrade, then hand over to a session.

A bearer credential is checked before the upgrade: an unknown or revoked one is refused
with HTTP 401 and the JSON error body of the API (code, message, next step), so nothing is
opened for it. Without a credential the socket is opened for pairing.

The standard WebSocket API (browsers, Node, Deno, Bun) hides the HTTP answer to a refused
upgrade, so an adapter built on it could not tell a revoked credential from a hub that is
down. A plain GET of the same path with the same credential answers what the upgrade would
have: the 401 and its body, or 426 (use a WebSocket here) when the credential would be taken.
"""

from __future__ import annotations

from typing import ClassVar

from quart import Blueprint, Response, request, websocket

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


class UpgradeRequired(HubError):
    status: ClassVar[int] = 426
    code: ClassVar[str] = "upgrade_required"
    hint: ClassVar[str] = "Open a WebSocket on this path; the credential (if any) was accepted."


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

    @blueprint.get(ENDPOINT_PATH)
    async def lap_probe() -> Response:
        try:
            credential = bearer_credential(request.headers.get("Authorization", ""))
            if credential is not None:
                await agent_for_credential(credential)
        except HubError as error:
            return error_response(error)
        return error_response(UpgradeRequired("This is the LAP/0.1 WebSocket endpoint."))

    return blueprint
