"""Answering a task's pending approvals together from its page: all, or item by item.

The form names the cards it showed (``items``), so "approve all" decides exactly what the
person saw, never a card that arrived since. The choices go through ``respond_to_batch``
with ``via="web"``. As on a single card, a high-risk "yes" is never sent from one press:
the page comes back asking to confirm each such item first.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, flash, redirect, request, url_for

from hub.core.errors import InvalidInput
from hub.core.store.models import Interaction
from hub.core.work.batch_answers import (
    APPROVE,
    MAX_BATCH_ITEMS,
    REJECT,
    BatchItem,
    Outcome,
    answer_for,
    respond_to_batch,
)
from hub.host.templates import render_template
from hub.web.pages.cards import CardView
from hub.web.pages.error_messages import said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.interactions import card_views
from hub.web.pages.session import current_user, login_required
from hub.web.pages.tasks import task_panel
from hub.web.pages.workspace import frame_for

blueprint = Blueprint("batches", __name__)


@blueprint.post("/w/<workspace_id>/tasks/<task_id>/decisions")
@login_required
async def decide(workspace_id: str, task_id: str) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)  # membership first
    form = await request.form
    task_url = url_for("pages.tasks.show", workspace_id=frame.workspace.id, task_id=task_id)
    choices = _choices(form)
    if not choices:
        await flash(_("Choose approve or reject for at least one item."))
        return redirect(task_url)
    interactions = await Interaction.filter(workspace_id=frame.workspace.id, id__in=list(choices))
    views = {view.id: view for view in await card_views(frame.workspace.id, interactions)}
    unconfirmed = [
        views[card_id]
        for card_id, option_id in choices.items()
        if card_id in views and _needs_confirmation(views[card_id], option_id, form)
    ]
    if unconfirmed:
        return await _ask_to_confirm(frame, task_id, unconfirmed, choices, form)
    items = [
        BatchItem(card_id, _answer(views.get(card_id), option_id, form))
        for card_id, option_id in choices.items()
    ]
    try:
        result = await respond_to_batch(
            frame.workspace.id, task_id, items, responder=f"user:{user.id}", via="web"
        )
    except InvalidInput as error:
        await flash(said(error))
        for problem in error.details.get("items", []):
            view = views.get(problem.get("interactionId", ""))
            named = view.title if view else problem.get("interactionId", "")
            await flash(f"“{named}”: {problem['problem']}")
        return redirect(task_url)
    await _tell_outcomes(result["items"], views)
    return redirect(task_url)


def _choices(form: Any) -> dict[str, str]:
    """``{card id: option id}`` for the cards the form showed and the person decided."""
    shown = list(dict.fromkeys(form.getlist("items")))[:MAX_BATCH_ITEMS]
    everything = form.get("all")
    if everything in (APPROVE, REJECT):
        return dict.fromkeys(shown, everything)
    picked = {card_id: form.get(f"choice-{card_id}", "") for card_id in shown}
    return {card_id: option_id for card_id, option_id in picked.items() if option_id}


def _needs_confirmation(view: CardView, option_id: str, form: Any) -> bool:
    option = view.card.option(option_id) if view.open and view.card else None
    if option is None or not view.needs_confirmation(option):
        return False
    return bool(form.get(f"confirm-{view.id}") != option_id)


def _answer(view: CardView | None, option_id: str, form: Any) -> dict[str, Any]:
    if view is None or view.card is None:
        return {"optionId": option_id}  # the core names the unknown card in its refusal
    # The hash of the action this form showed for the item, not the card's action now.
    return answer_for(view.card, option_id, form.get(f"actionHash-{view.id}"))


async def _ask_to_confirm(
    frame: Any, task_id: str, unconfirmed: list[CardView], choices: dict[str, str], form: Any
) -> Any:
    task = await task_panel(frame.workspace.id, task_id)
    # The second step carries the hashes of the actions the first step showed.
    shown = {card_id: form.get(f"actionHash-{card_id}") for card_id in choices}
    task["batch_confirm"] = {
        "items": unconfirmed,
        "choices": choices,
        "action_hashes": {card_id: value for card_id, value in shown.items() if value},
    }
    html = await render_template(
        "pages/task.html",
        **frame.context(),
        task=task,
        next_url=url_for("pages.tasks.show", workspace_id=frame.workspace.id, task_id=task_id),
        # The second step is not swept away by a live update while the person reads it.
        no_refresh=True,
    )
    return html, 200


async def _tell_outcomes(outcomes: list[dict[str, Any]], views: dict[str, CardView]) -> None:
    decided = [item for item in outcomes if item["outcome"] == Outcome.DECIDED]
    away = any(views[i["interactionId"]].agent_away for i in decided if i["interactionId"] in views)
    if decided and away:  # stored, and sent the moment the agent connects again
        await flash(_("%(count)s answers are queued until the agent returns.", count=len(decided)))
    elif decided:
        await flash(_("%(count)s answers were sent to the agent.", count=len(decided)))
    for item in outcomes:
        if item["outcome"] == Outcome.DECIDED:
            continue
        view = views.get(item["interactionId"])
        title = view.title if view else _("a question")
        if item["outcome"] == Outcome.ALREADY_DECIDED:
            who = item.get("respondedByName") or _("someone")  # a name, never the actor's id
            await flash(
                _(
                    "“%(title)s”: already decided by %(who)s via %(surface)s.",
                    title=title,
                    who=who,
                    surface=item.get("via") or "",
                )
            )
        else:
            await flash(f"“{title}”: {item.get('message', '')}")
