"""Pairing an agent through the core, the way the gateway and the JSON API do it."""

from __future__ import annotations

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import redeem_pairing_code
from hub.core.store.models import Agent, Workspace

SECRET_KEY = "test-secret-key-" + "x" * 32  # the key HubProcess gives the hub


async def new_code(workspace: Workspace | str, ttl_s: float = 600.0) -> str:
    workspace_id = workspace if isinstance(workspace, str) else workspace.id
    code, _ = await create_pairing_code(workspace_id, secret_key=SECRET_KEY, ttl_s=ttl_s)
    return code


async def paired_agent(workspace: Workspace, name: str = "builder") -> tuple[Agent, str]:
    """A freshly paired agent (pending) and its credential."""
    return await redeem_pairing_code(
        await new_code(workspace),
        name=name,
        runtime="python",
        version="1.0",
        capabilities=["tasks"],
        secret_key=SECRET_KEY,
    )
