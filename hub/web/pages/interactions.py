"""Answering interaction cards from the web, and one card on a page of its own.

Every answer goes through ``respond_to_interaction`` with ``via="web"``. A high-risk
"yes" is never recorded from a single press: without the second step's confirmation the
answer is not sent and the card comes back asking for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from quart import Blueprint, flash, redirect, request, url_for

from hub.channels.action_view import FIELD_PREFIX, ActionField, edits_from_form
from hub.core.agents.registry import agents_by_id
from hub.core.approvals.policies import policy_status
from hub.core.errors import AlreadyDecided, Conflict, Forbidden, Gone, InvalidInput
from hub.core.store.models import Agent, AgentStatus, Interaction, Task
from hub.core.work.interactions import get_interaction, respond_to_interaction
from hub.host.templates import render_template
from hub.web.pages.cards import CardView, card_view, response_from_form
from hub.web.pages.error_messages import for_person
from hub.web.pages.i18n import gettext as _
from hub.web.pages.names import workspace_names
from hub.web.pages.session import current_user, login_required, safe_next
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("interactions", __name__)


async def card_views(
    workspace_id: str,
    interactions: Iterable[Interaction],
    *,
    tasks_read: Mapping[str, Task] | None = None,
    agents_read: Mapping[str, Agent] | None = None,
) -> list[CardView]:
    """Cards with the names a person recognises: who answered, which agent asks, what task.
    ``tasks_read`` and ``agents_read``: the cards' tasks and agents, when the page has them
    already (the inbox), by id; else they are read here."""
    interactions = list(interactions)
    viewer = await current_user()
    statuses = [policy_status(i) for i in interactions if i.policy]
    named = [f"user:{u}" for s in statuses if s for u in s.people]  # approvers and voters
    asking = {i.agent_id for i in interactions if i.agent_id}
    if agents_read is None:
        agents_read = await agents_by_id(workspace_id, asking)
    names = await workspace_names(
        workspace_id,
        [*(i.responded_by for i in interactions if i.responded_by), *named],
        agent_ids=asking,
        agents_read=agents_read,
    )
    away = {i for i in asking if i in agents_read and agents_read[i].status == AgentStatus.OFFLINE}
    task_ids = [i.task_id for i in interactions if i.task_id]
    tasks = tasks_read
    if tasks is None:
        tasks = (
            {t.id: t for t in await Task.filter(workspace_id=workspace_id, id__in=task_ids)}
            if task_ids
            else {}
        )
    return [
        card_view(
            interaction,
            responder_name=names.actor(interaction.responded_by)
            if interaction.responded_by
            else None,
            agent_name=names.agent(interaction.agent_id) if interaction.agent_id else None,
            task=(
                {"id": tasks[interaction.task_id].id, "title": tasks[interaction.task_id].title}
                if interaction.task_id in tasks
                else None
            ),
            people=dict(names.people),
            viewer_id=viewer.id if viewer else None,
            agent_away=interaction.agent_id in away,
        )
        for interaction in interactions
    ]


@blueprint.get("/w/<workspace_id>/interactions/<interaction_id>")
@login_required
async def show(workspace_id: str, interaction_id: str) -> Any:
    return await _render(workspace_id, interaction_id, status=200)


@blueprint.post("/w/<workspace_id>/interactions/<interaction_id>/respond")
@login_required
async def respond(workspace_id: str, interaction_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)  # membership first
    form = await request.form
    next_url = safe_next(
        form.get("next"), url_for("pages.inbox.show", workspace_id=frame.workspace.id)
    )
    interaction = await get_interaction(frame.workspace.id, interaction_id)
    (view,) = await card_views(frame.workspace.id, [interaction])
    values = {
        "text": form.get("text", ""),
        "comment": form.get("comment", ""),
        "optionIds": form.getlist("optionIds"),
        **_action_values(view, form),
    }
    if view.open and not view.multiple and view.type != "input":
        option = next((o for o in view.options if o.id == form.get("optionId")), None)
        unconfirmed = option is not None and form.get("confirm") != option.id
        if unconfirmed and option is not None and view.needs_confirmation(option):
            return await _render(
                workspace_id, interaction_id, confirm_option=option, values=values, status=200
            )
    try:
        answered = await respond_to_interaction(
            frame.workspace.id,
            interaction.id,
            response_from_form(view, form),
            responder=f"user:{user.id}",
            via="web",
        )
    except (InvalidInput, Forbidden) as error:
        return await _render(
            workspace_id,
            interaction_id,
            error=for_person(error),
            values=values,
            status=error.status,
        )
    except (AlreadyDecided, Gone) as error:
        await flash(for_person(error)["message"])
        return redirect(next_url)
    except Conflict as error:
        if error.code == "action_changed":  # show the card as it stands now
            values.pop("edits", None)
            return await _render(
                workspace_id, interaction_id, error=for_person(error), values=values, status=409
            )
        await flash(for_person(error)["message"])  # e.g. already_voted: say so, change nothing
        return redirect(next_url)
    if answered.status == "pending":  # a vote on a quorum card; the others still decide
        status = policy_status(answered)
        await flash(
            _(
                "Your vote is recorded: %(count)s of %(required)s approvals.",
                count=status.approvals if status else 0,
                required=status.required if status else 0,
            )
        )
        return redirect(next_url)
    if view.agent_away:  # stored, and sent the moment the agent connects again
        await flash(_("Your answer is queued until the agent returns."))
    else:
        await flash(_("Your answer was sent to the agent."))
    return redirect(next_url)


def _action_values(view: CardView, form: Any) -> dict[str, Any]:
    """What the person sent about the action, to carry through a second step or an error."""
    proposed = view.card.action if view.card else None
    if proposed is None:
        return {}
    edits = edits_from_form(proposed, form)
    return {
        "actionHash": form.get("actionHash", ""),
        "edits": {k: v for k, v in form.items() if k.startswith(FIELD_PREFIX)},
        "changed": [
            (name, ActionField(name, value, editable=True).text)
            for name, value in edits.items()
            if value != proposed.fields[name]
        ],
    }


async def _render(
    workspace_id: str,
    interaction_id: str,
    *,
    status: int,
    error: dict[str, Any] | None = None,
    values: dict[str, Any] | None = None,
    confirm_option: Any = None,
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    interaction = await get_interaction(frame.workspace.id, interaction_id)
    (view,) = await card_views(frame.workspace.id, [interaction])
    form = await request.form if request.method == "POST" else {}
    next_url = safe_next(
        form.get("next") if form else None,
        url_for("pages.inbox.show", workspace_id=frame.workspace.id),
    )
    html = await render_template(
        "pages/interaction.html",
        **frame.context(),
        card=view,
        next_url=next_url,
        error=error,
        values=values or {},
        confirm_option=confirm_option,
        # An answer in progress (second step, a correction) is not swept away by live updates.
        no_refresh=request.method == "POST",
    )
    return html, status
