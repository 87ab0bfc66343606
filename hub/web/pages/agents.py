"""Agents (spec §6, §7.1): who is online, the connect wizard, confirm, revoke, diagnostics.

The wizard keeps the one-time code in the person's own session (signed cookie) for its ten
minutes, so the page can be reloaded — or refreshed live — without losing the code that is
shown only to its creator. When the agent redeems it, the same page turns into "confirm
its name".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from quart import (
    Blueprint,
    current_app,
    flash,
    redirect,
    request,
    session,
    url_for,
)

from hub.core.agents.pairing import create_pairing_code
from hub.core.agents.registry import (
    agents_page,
    confirm_agent,
    get_agent,
    public_status,
    revoke_agent,
)
from hub.core.agents.remote import REMOTE_AGENTS_EXTENSION, list_remote_agents, remote_of
from hub.core.errors import HubError
from hub.core.people.credentials import hash_pairing_code
from hub.core.store.models import Agent, Event, PairingCode
from hub.core.work.sensitive_answers import envelopes_for_people
from hub.host.settings import settings_of
from hub.host.templates import render_template
from hub.web.pages.error_messages import said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.paging import page_of
from hub.web.pages.session import current_user, login_required
from hub.web.pages.tasks import new_task_form
from hub.web.pages.timeline import agent_log
from hub.web.pages.workspace import Frame, frame_for

blueprint = Blueprint("agents", __name__)

SESSION_PAIRING = "pairing"
DIAGNOSTIC_LIMIT = 100
PAGE_SIZE = 100


def agent_status(agent: Agent) -> str:
    """The one word the page shows; an offline agent that was heard from "lost" its link."""
    status = public_status(agent)
    if status == "offline" and agent.last_heartbeat_at is not None:
        return "lost"
    return status


@blueprint.get("/w/<workspace_id>/agents")
@login_required
async def index(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    return await render_index(await frame_for(user, workspace_id))


async def render_index(
    frame: Frame, *, status: int = 200, error: dict[str, Any] | None = None, typed_url: str = ""
) -> tuple[str, int]:
    """The agents page; ``error`` and ``typed_url`` when adding a remote agent failed."""
    shown, paged = await page_of(
        lambda cursor: agents_page(frame.workspace.id, limit=PAGE_SIZE, cursor=cursor)
    )
    agents = shown.items
    remotes = {a.id: r for a, r in await list_remote_agents(frame.workspace.id)}
    html = await render_template(
        "pages/agents.html",
        **frame.context(),
        agents=[(a, agent_status(a), remotes.get(a.id)) for a in agents],
        older=shown.next_cursor,
        paged=paged,
        remote_agents_on=REMOTE_AGENTS_EXTENSION in current_app.extensions,
        error=error,
        typed_url=typed_url,
        no_refresh=error is not None,
    )
    return html, status


@blueprint.get("/w/<workspace_id>/agents/connect")
@login_required
async def connect(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    pairing = await _pending_pairing(frame.workspace.id)
    agent = None
    if pairing is not None and pairing["agentId"]:
        agent = await get_agent(frame.workspace.id, pairing["agentId"])
    # Just confirmed: the wizard's last step offers the agent its first task.
    connected = None
    if request.args.get("connected"):
        connected = await get_agent(frame.workspace.id, request.args["connected"])
        if connected.confirmed_at is None:
            connected = None
    settings = settings_of(current_app)
    return await render_template(
        "pages/connect.html",
        **frame.context(),
        pairing=pairing,
        agent=agent,
        connected=connected,
        connected_status=agent_status(connected) if connected else None,
        new_task=new_task_form([connected] if connected else [], {}),
        command=(
            f"lineup agent demo --hub {settings.resolved_public_url} --pair {pairing['code']}"
            if pairing
            else None
        ),
    )


@blueprint.post("/w/<workspace_id>/agents/connect")
@login_required
async def create_code(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    settings = settings_of(current_app)
    code, expires_at = await create_pairing_code(
        frame.workspace.id,
        secret_key=settings.secret_key,
        ttl_s=settings.pairing_code_ttl_s,
        created_by=user,
    )
    row = await PairingCode.get(code_hash=hash_pairing_code(code, settings.secret_key))
    session[SESSION_PAIRING] = {
        "workspaceId": frame.workspace.id,
        "id": row.id,
        "code": code,
        "expiresAt": expires_at.isoformat(),
    }
    return redirect(url_for("pages.agents.connect", workspace_id=frame.workspace.id))


async def _pending_pairing(workspace_id: str) -> dict[str, Any] | None:
    """The wizard's code, and the agent that redeemed it once one did."""
    pairing = session.get(SESSION_PAIRING)
    if not pairing or pairing.get("workspaceId") != workspace_id:
        return None
    row = await PairingCode.filter(id=pairing["id"], workspace_id=workspace_id).first()
    if row is None:
        return None
    expired = row.used_at is None and row.expires_at <= datetime.now(UTC)
    return {**pairing, "agentId": row.agent_id, "expired": expired}


@blueprint.post("/w/<workspace_id>/agents/<agent_id>/confirm")
@login_required
async def confirm(workspace_id: str, agent_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    form = await request.form
    try:
        agent = await confirm_agent(
            frame.workspace.id, agent_id, form.get("name", ""), by=f"user:{user.id}"
        )
    except HubError as error:
        await flash(said(error))
        return redirect(url_for("pages.agents.connect", workspace_id=frame.workspace.id))
    pairing = session.get(SESSION_PAIRING)
    if pairing and pairing.get("workspaceId") == frame.workspace.id:
        session.pop(SESSION_PAIRING)
    return redirect(
        url_for("pages.agents.connect", workspace_id=frame.workspace.id, connected=agent.id)
    )


@blueprint.post("/w/<workspace_id>/agents/<agent_id>/revoke")
@login_required
async def revoke(workspace_id: str, agent_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id, acting=True)
    agent = await revoke_agent(frame.workspace.id, agent_id, by=f"user:{user.id}")
    await flash(_("%(name)s was revoked; its credential no longer works.", name=agent.name))
    return redirect(url_for("pages.agents.index", workspace_id=frame.workspace.id))


@blueprint.get("/w/<workspace_id>/agents/<agent_id>")
@login_required
async def show(workspace_id: str, agent_id: str) -> Any:
    """One agent with its diagnostic log: what it did and what happened to it, newest first."""
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    agent = await get_agent(frame.workspace.id, agent_id)
    own = await (
        Event.filter(workspace_id=frame.workspace.id, actor=f"agent:{agent.id}")
        .order_by("-sequence")
        .limit(DIAGNOSTIC_LIMIT)
    )
    lifecycle = await (
        Event.filter(workspace_id=frame.workspace.id, type__startswith="agent.")
        .order_by("-sequence")
        .limit(DIAGNOSTIC_LIMIT * 5)
    )
    about = [e for e in lifecycle if (e.payload or {}).get("agentId") == agent.id]
    events = sorted({e.sequence: e for e in [*own, *about]}.values(), key=lambda e: -e.sequence)
    shown = await envelopes_for_people(frame.workspace.id, events[:DIAGNOSTIC_LIMIT])
    return await render_template(
        "pages/agent.html",
        **frame.context(),
        agent=agent,
        # Not "status": the page imports the macro of that name, which the value would hide.
        agent_state=agent_status(agent),
        remote=await remote_of(agent.id),
        log=await agent_log(frame.workspace.id, shown),
    )
