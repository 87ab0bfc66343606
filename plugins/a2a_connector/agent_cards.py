"""Fetch a remote agent's card and reduce it to what the hub keeps (``RemoteCard``).

The card is untrusted input from the network: read with a size cap through the outbound
guard, parsed as plain JSON, and every field checked by hand, so a card with wrong types or
huge fields yields a clear error or a bounded, inert summary, never a crash. Both
generations are read: v1.0 (``supportedInterfaces`` with ``protocolVersion``) and v0.3
(``url``, ``preferredTransport``, ``protocolVersion: "0.3.x"``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from hub.core.agents.remote import RemoteCard
from hub.core.errors import InvalidInput
from hub.net import guarded_http_client
from plugins.a2a_connector import untrusted
from plugins.a2a_connector.errors import RemoteUnreachable

WELL_KNOWN_PATH = "/.well-known/agent-card.json"
MAX_CARD_BYTES = 256_000
JSONRPC = "JSONRPC"


class InvalidCard(InvalidInput):
    code = "invalid_agent_card"
    hint = "Check that the address is an A2A agent's (its card is at /.well-known/agent-card.json)."


def card_address(url: str) -> str:
    url = url.strip()
    if url.endswith(".json"):
        return url
    return url.rstrip("/") + WELL_KNOWN_PATH


async def fetch_card(url: str, *, allow_private: bool, timeout_s: float = 15.0) -> RemoteCard:
    """The card at ``url`` (an agent's base address or its card's own address)."""
    address = card_address(url)
    async with guarded_http_client(allow_private=allow_private, timeout=timeout_s) as client:
        try:
            async with client.stream("GET", address, headers={"Accept": "application/json"}) as r:
                if r.status_code != 200:
                    raise InvalidCard(f"The agent card at {address} answered HTTP {r.status_code}.")
                body = b""
                async for chunk in r.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_CARD_BYTES:
                        raise InvalidCard(f"The agent card is larger than {MAX_CARD_BYTES} bytes.")
        except httpx.HTTPError as error:
            raise RemoteUnreachable(
                f"The agent at {address} cannot be reached: {error.__class__.__name__}."
            ) from None
    try:
        data = json.loads(body)
    except ValueError:
        raise InvalidCard(f"The agent card at {address} is not JSON.") from None
    return read_card(data, url=url.strip())


def read_card(data: Any, *, url: str) -> RemoteCard:
    if not isinstance(data, dict):
        raise InvalidCard("The agent card is not a JSON object.")
    name = untrusted.label(data.get("name"), untrusted.NAME_LIMIT)
    if not name:
        raise InvalidCard("The agent card has no name.")
    endpoint, version = _interface(data)
    capabilities = data.get("capabilities") if isinstance(data.get("capabilities"), dict) else {}
    skills = [_skill(s) for s in (data.get("skills") or [])[: untrusted.MAX_SKILLS]]
    skills = [s for s in skills if s is not None] if isinstance(data.get("skills"), list) else []
    summary = {
        "name": name,
        "description": untrusted.text(data.get("description"), untrusted.DESCRIPTION_LIMIT),
        "version": untrusted.label(data.get("version")),
        "streaming": untrusted.flag(capabilities.get("streaming")),
        # Whether the hub may ask it to post changes to a webhook (``push``).
        "pushNotifications": untrusted.flag(capabilities.get("pushNotifications")),
        "skills": skills,
        "provider": untrusted.label((data.get("provider") or {}).get("organization"))
        if isinstance(data.get("provider"), dict)
        else "",
        "documentationUrl": untrusted.web_url(data.get("documentationUrl")),
    }
    return RemoteCard(
        url=url,
        endpoint_url=endpoint,
        protocol_version=version,
        name=name,
        version=summary["version"],
        streaming=summary["streaming"],
        auth_scheme=_auth_scheme(data.get("securitySchemes")),
        skills=[s["name"] or s["id"] for s in skills][:20],
        card=summary,
    )


def _interface(data: dict[str, Any]) -> tuple[str, str]:
    """The JSON-RPC endpoint and the protocol generation ("1.0" or "0.3") to speak to it."""
    interfaces = data.get("supportedInterfaces")
    if isinstance(interfaces, list):
        for interface in interfaces:
            if not isinstance(interface, dict) or interface.get("protocolBinding") != JSONRPC:
                continue
            endpoint = untrusted.web_url(interface.get("url"))
            if endpoint:
                return endpoint, _generation(interface.get("protocolVersion"))
    transport = data.get("preferredTransport") or JSONRPC
    endpoint = untrusted.web_url(data.get("url"))
    if endpoint and transport == JSONRPC:
        return endpoint, _generation(data.get("protocolVersion") or "0.3")
    for interface in data.get("additionalInterfaces") or []:
        if isinstance(interface, dict) and interface.get("transport") == JSONRPC:
            endpoint = untrusted.web_url(interface.get("url"))
            if endpoint:
                return endpoint, "0.3"
    raise InvalidCard(
        "The agent card names no JSON-RPC endpoint with an http(s) address.",
        hint="The hub speaks A2A over JSON-RPC; ask the agent's operator to offer it.",
    )


def _generation(value: Any) -> str:
    return "0.3" if isinstance(value, str) and value.strip().startswith("0.") else "1.0"


def _skill(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    skill = {
        "id": untrusted.label(value.get("id")),
        "name": untrusted.label(value.get("name")),
        "description": untrusted.text(value.get("description"), 500),
        "tags": untrusted.strings(value.get("tags"), limit=untrusted.MAX_TAGS, each=40),
    }
    return skill if skill["id"] or skill["name"] else None


def _auth_scheme(schemes: Any) -> str:
    """ "bearer", "header:<Name>" (an API key sent in a header), or "" when none is asked.

    v1.0 cards wrap each scheme (``httpAuthSecurityScheme``, ``apiKeySecurityScheme``);
    v0.3 cards tag it with ``type``. Schemes the hub cannot fill in (OAuth, mTLS) are left
    to the remote's ``auth-required`` state, which tells the person what to do.
    """
    if not isinstance(schemes, dict):
        return ""
    for scheme in schemes.values():
        if not isinstance(scheme, dict):
            continue
        http = scheme.get("httpAuthSecurityScheme") or (
            scheme if scheme.get("type") == "http" else None
        )
        if isinstance(http, dict) and str(http.get("scheme", "")).lower() == "bearer":
            return "bearer"
        key = scheme.get("apiKeySecurityScheme") or (
            scheme if scheme.get("type") == "apiKey" else None
        )
        if isinstance(key, dict) and (key.get("location") or key.get("in")) == "header":
            header = untrusted.label(key.get("name"), 100)
            if header and all(c.isalnum() or c in "-_" for c in header):
                return f"header:{header}"
    return ""


__all__ = ["InvalidCard", "card_address", "fetch_card", "read_card"]
