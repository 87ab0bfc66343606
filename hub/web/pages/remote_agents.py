"""Adding a remote (A2A) agent from the agents page, and giving the key its card asks for.

The form takes an address; the hub fetches the agent card there (through the outbound
guard), adds the agent and opens its page, which shows the card as plain text. Whatever
goes wrong — the address is refused, nothing answers, the card is not one — the agents page
comes back with the address still typed, the reason, a next step and a diagnostic code,
and nothing is added.

A key (API key or bearer token) is asked for only once the card says it needs one. It goes
from the form straight into ``store_remote_secret`` (sealed); no page shows it again.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, current_app, flash, redirect, request, url_for

from hub.core.agents.remote import REMOTE_AGENTS_EXTENSION, RemoteAgentAdder, store_remote_secret
from hub.core.errors import HubError
from hub.host.identity import member_of
from hub.host.settings import settings_of
from hub.web.pages.agents import render_index
from hub.web.pages.error_messages import for_person, said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("remote_agents", __name__)

MAX_URL_LENGTH = 2000


@blueprint.post("/w/<workspace_id>/agents/remote")
@login_required
async def add(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await member_of(workspace_id, write=True)  # viewers look, they do not add
    frame = await frame_for(user, workspace_id)
    url = (await request.form).get("url", "").strip()
    connector: RemoteAgentAdder | None = current_app.extensions.get(REMOTE_AGENTS_EXTENSION)
    if connector is None:
        error = {
            "code": "a2a_disabled",
            "message": _("Remote (A2A) agents are turned off on this hub."),
            "hint": _("The hub's operator can turn them on with LINEUP_A2A_ENABLED=true."),
        }
        return await render_index(frame, status=404, error=error, typed_url=url[:MAX_URL_LENGTH])
    if not url or len(url) > MAX_URL_LENGTH:
        error = {
            "code": "invalid_agent_address",
            "message": _("Give the agent's address (at most %(n)s characters).", n=MAX_URL_LENGTH),
            "hint": _("Like https://agent.example.com: the hub fetches its card from there."),
        }
        return await render_index(frame, status=422, error=error, typed_url=url[:MAX_URL_LENGTH])
    try:
        view = await connector.add_remote_agent(
            frame.workspace.id, url, pinned=False, secret=None, by=f"user:{user.id}"
        )
    except HubError as error:
        return await render_index(
            frame, status=error.status, error=for_person(error), typed_url=url
        )
    await flash(_("%(name)s is added. Its card is below.", name=view["name"]))
    return redirect(
        url_for("pages.agents.show", workspace_id=frame.workspace.id, agent_id=view["id"])
    )


@blueprint.post("/w/<workspace_id>/agents/<agent_id>/key")
@login_required
async def give_key(workspace_id: str, agent_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await member_of(workspace_id, write=True)
    frame = await frame_for(user, workspace_id)
    secret = (await request.form).get("secret", "")
    try:
        await store_remote_secret(
            frame.workspace.id,
            agent_id,
            secret,
            secret_key=settings_of(current_app).secret_key,
        )
    except HubError as error:
        await flash(f"{said(error)} {for_person(error)['hint']}")
    else:
        await flash(_("The key is stored encrypted. It will not be shown again."))
    return redirect(
        url_for("pages.agents.show", workspace_id=frame.workspace.id, agent_id=agent_id)
    )
