"""The Settings page's approval-policy rules: the workspace's owners add and delete them,
choose on which risks a card's expiry may approve it, and write the calls the workspace's
coding agents may never make.

The form is the API's ``POST /policy-rules`` in HTML: people are typed as emails separated
by commas, delays in seconds. The core checks everything (``hub.core.approvals.policies``); a bad
rule comes back on the page with the core's message and code, and nothing is saved.
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, flash, redirect, request, url_for

from hub.core.approvals.coding_agent_rules import update_deny_rules
from hub.core.approvals.expiry_approval import update_approve_on_expiry
from hub.core.approvals.rules import create_rule, delete_rule
from hub.core.errors import Forbidden, HubError
from hub.core.store.models import Membership, Role
from hub.protocol.clock import utcnow
from hub.web.pages.error_messages import for_person, said
from hub.web.pages.i18n import gettext as _
from hub.web.pages.session import current_user, login_required
from hub.web.pages.settings import render_settings

blueprint = Blueprint("policy_rules", __name__)


async def _owner_actor(workspace_id: str) -> str:
    user = await current_user()
    assert user is not None
    membership = await Membership.filter(user_id=user.id, workspace_id=workspace_id).first()
    if membership is None or membership.role != Role.OWNER:
        raise Forbidden(
            "Only owners of a workspace change its approval policies.",
            code="owners_only",
            hint="Ask an owner of the workspace to change the rule.",
        )
    return f"user:{user.id}"


def policy_from_form(form: Any) -> dict[str, Any]:
    def people(name: str) -> list[str]:
        return [p.strip() for p in str(form.get(name, "")).split(",") if p.strip()]

    def seconds(name: str) -> int | str | None:
        value = str(form.get(name, "")).strip()
        return int(value) if value.isdigit() else (value or None)

    policy: dict[str, Any] = {
        "mode": form.get("mode") or "any",
        "approvers": people("approvers"),
        "required": seconds("required") or 1,
        "remindAfterS": seconds("remind_after_s"),
        "escalateAfterS": seconds("escalate_after_s"),
        "escalateTo": people("escalate_to"),
        "onExpiry": form.get("on_expiry") or None,
    }
    return {key: value for key, value in policy.items() if value is not None}


@blueprint.post("/w/<workspace_id>/settings/policy-rules")
@login_required
async def add(workspace_id: str) -> Any:
    form = await request.form
    try:
        actor = await _owner_actor(workspace_id)
        await create_rule(
            workspace_id,
            policy=policy_from_form(form),
            risk=form.get("risk") or None,
            agent_id=form.get("agent_id") or None,
            card_type=form.get("card_type") or None,
            created_by=actor,
            now=utcnow(),
        )
    except HubError as error:
        return await render_settings(
            workspace_id, status=error.status, rule_error=for_person(error), rule_form=dict(form)
        )
    await flash(_("Approval policy rule added."))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id) + "#policy-title")


@blueprint.post("/w/<workspace_id>/settings/policy-rules/<rule_id>/delete")
@login_required
async def remove(workspace_id: str, rule_id: str) -> Any:
    try:
        await _owner_actor(workspace_id)
        await delete_rule(workspace_id, rule_id)
        await flash(_("Approval policy rule deleted."))
    except HubError as error:
        await flash(said(error))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id) + "#policy-title")


@blueprint.post("/w/<workspace_id>/settings/approval-settings")
@login_required
async def change_settings(workspace_id: str) -> Any:
    """The API's ``PUT /approval-settings`` in HTML: one checkbox per risk."""
    form = await request.form
    try:
        actor = await _owner_actor(workspace_id)
        await update_approve_on_expiry(
            workspace_id, form.getlist("approve_on_expiry"), by=actor, now=utcnow()
        )
        await flash(_("Approval settings saved."))
    except HubError as error:
        await flash(said(error))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id) + "#policy-title")


@blueprint.post("/w/<workspace_id>/settings/coding-agent-rules")
@login_required
async def change_coding_agent_rules(workspace_id: str) -> Any:
    """The API's ``PUT /coding-agent-rules`` in HTML: one rule per line."""
    text = str((await request.form).get("deny", ""))
    try:
        actor = await _owner_actor(workspace_id)
        await update_deny_rules(workspace_id, text.splitlines(), by=actor, now=utcnow())
    except HubError as error:
        return await render_settings(
            workspace_id,
            status=error.status,
            coding_rules_error=for_person(error),
            coding_rules_text=text,
        )
    await flash(_("Rules for coding agents saved."))
    return redirect(
        url_for("pages.settings.show", workspace_id=workspace_id) + "#coding-agents-title"
    )
