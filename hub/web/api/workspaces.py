"""Workspaces the caller belongs to, and one-time pairing codes for connecting agents."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app
from quart_schema import document_response

from hub.config import Settings
from hub.core.agents.pairing import create_pairing_code
from hub.core.people.accounts import workspaces_of
from hub.core.store.models import Membership, Role
from hub.host.identity import current_caller, member_of
from hub.host.settings import settings_of
from hub.protocol.clock import iso
from hub.web.api.answers import PairingCodeAnswer, WorkspaceList

blueprint = Blueprint("api_workspaces", __name__, url_prefix="/api/v1")


def _settings() -> Settings:
    settings: Settings = settings_of(current_app)
    return settings


@blueprint.get("/workspaces")
@document_response(WorkspaceList)
async def list_workspaces() -> dict[str, Any]:
    """The workspaces you belong to, with your role and where each one's log stands."""
    caller = await current_caller()
    roles = dict(
        await Membership.filter(user_id=caller.user.id).values_list("workspace_id", "role")
    )
    return {
        "workspaces": [
            {
                "id": w.id,
                "name": w.name,
                "role": Role(roles[w.id]).value,
                "epoch": w.epoch,
                "lastSequence": int(w.last_sequence),
                "createdAt": iso(w.created_at),
            }
            for w in await workspaces_of(caller.user)
        ]
    }


@blueprint.post("/workspaces/<ws>/pairing-codes")
@document_response(PairingCodeAnswer, 201)
async def new_pairing_code(ws: str) -> tuple[dict[str, Any], int]:
    """A one-time code (valid 10 minutes) and the command to run on the agent's machine."""
    caller, _ = await member_of(ws, write=True)
    settings = _settings()
    code, expires_at = await create_pairing_code(
        ws,
        secret_key=settings.secret_key,
        ttl_s=settings.pairing_code_ttl_s,
        created_by=caller.user,
    )
    command = f"lineup agent demo --hub {settings.resolved_public_url} --pair {code}"
    return {"code": code, "expiresAt": iso(expires_at), "command": command}, 201
