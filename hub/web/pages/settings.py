"""Settings (spec §6): language, time zone, notifications, password, personal API tokens.

Language and time zone are kept in the session (how this person reads the hub in this
browser) and in the person's notification preferences (``hub.core.notify.preferences``), so
emails and messages use them too. Which surface hears about what — this browser, email,
Telegram —, "only high-risk cards" and quiet hours are those same preferences; a surface
this hub did not set up is shown as such and cannot be turned on. A new token's secret is
shown once, on the page that created it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from quart import (
    Blueprint,
    current_app,
    flash,
    redirect,
    request,
    session,
    url_for,
)

from hub.channels.email import EmailChannel
from hub.channels.runtime import runtime_of
from hub.core.approvals.coding_agent_rules import deny_rules
from hub.core.approvals.expiry_approval import approve_on_expiry
from hub.core.approvals.rules import list_rules, rule_view
from hub.core.errors import HubError
from hub.core.notify.channel_accounts import linked_surfaces
from hub.core.notify.preferences import get_preferences, surfaces, update_preferences
from hub.core.people.accounts import create_api_token, revoke_api_token
from hub.core.people.passwords import change_password
from hub.core.people.two_factor import is_on, provisioning_uri, recovery_codes_left
from hub.core.store.models import ApiToken, Membership, Role, User
from hub.host.client_address import client_address
from hub.host.identity import session_signed_in
from hub.host.templates import render_template
from hub.web.pages.error_messages import for_person, said
from hub.web.pages.feishu_link import feishu_section
from hub.web.pages.i18n import LANGUAGES, time_zone_names, valid_time_zone
from hub.web.pages.i18n import gettext as _
from hub.web.pages.push_devices import push_context
from hub.web.pages.session import current_user, login_required
from hub.web.pages.slack_link import slack_section
from hub.web.pages.telegram_link import qr_svg, telegram_section
from hub.web.pages.workspace import frame_for


async def policy_rules_context(workspace_id: str, user_id: str) -> dict[str, Any]:
    """The workspace's rules with names on the people they name, and whether the viewer,
    an owner, may change them."""
    rules = await list_rules(workspace_id)
    ids = {
        u
        for rule in rules
        for key in ("approvers", "escalateTo")
        for u in rule.policy.get(key) or []
    }
    names = {
        str(i): str(e) for i, e in await User.filter(id__in=list(ids)).values_list("id", "email")
    }
    role = (
        await Membership.filter(workspace_id=workspace_id, user_id=user_id)
        .first()
        .values_list("role", flat=True)
    )

    def shown(people: list[str] | None) -> str:
        return ", ".join(names.get(p, p) for p in people or [])

    return {
        "rules": [
            {
                **rule_view(rule),
                "approver_names": shown(rule.policy.get("approvers")),
                "escalate_names": shown(rule.policy.get("escalateTo")),
            }
            for rule in rules
        ],
        "may_change": role == Role.OWNER,
        "approve_on_expiry": await approve_on_expiry(workspace_id),
        "coding_agent_deny": await deny_rules(workspace_id),
    }


blueprint = Blueprint("settings", __name__)


@blueprint.get("/w/<workspace_id>/settings")
@login_required
async def show(workspace_id: str) -> Any:
    return await render_settings(workspace_id)


@blueprint.post("/w/<workspace_id>/settings/preferences")
@login_required
async def preferences(workspace_id: str) -> Any:
    form = await request.form
    language = form.get("language", "")
    if language in LANGUAGES:
        session["lang"] = language
    else:
        session.pop("lang", None)  # follow the browser
    time_zone = form.get("time_zone", "").strip()
    if not time_zone:
        session.pop("tz", None)  # follow the browser
    elif valid_time_zone(time_zone):
        session["tz"] = time_zone
    else:
        return await render_settings(
            workspace_id,
            status=422,
            error={
                "code": "unknown_time_zone",
                "message": _("%(zone)s is not a time zone.", zone=time_zone),
                "hint": _("Pick one from the list, like Asia/Shanghai or Europe/Berlin."),
            },
        )
    user = await current_user()
    assert user is not None
    changes: dict[str, Any] = {"timezone": session.get("tz") or request.cookies.get("tz") or "UTC"}
    if language in LANGUAGES:
        changes["language"] = language
    await update_preferences(user.id, changes)
    await flash(_("Preferences saved."))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id))


@blueprint.post("/w/<workspace_id>/settings/notifications")
@login_required
async def notifications(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    form = await request.form
    current = await get_preferences(user.id)
    shown = await notification_surfaces(user.id, current)
    choosable = [row["name"] for row in shown if row["state"] in ("ready", "kept_here")]
    changes: dict[str, Any] = {
        "surfaces": {
            surface: {event: form.get(f"{surface}:{event}") == "on" for event in current["events"]}
            for surface in choosable
        },
        "onlyHighRisk": form.get("only_high_risk") == "on",
    }
    # A surface not set up has no working boxes; a form that sends one anyway is refused
    # by the preferences rather than quietly dropped.
    for key in form:
        surface, _sep, event = key.partition(":")
        if surface in current["surfacesNotSetUp"] and event in current["events"]:
            changes["surfaces"].setdefault(surface, {})[event] = form.get(key) == "on"
    start, end = form.get("quiet_start", ""), form.get("quiet_end", "")
    changes["quietHours"] = (
        {"start": start, "end": end, "letHighRiskThrough": form.get("quiet_high_risk") == "on"}
        if start and end
        else None
    )
    try:
        await update_preferences(user.id, changes)
    except HubError as error:
        shown_error = for_person(error)
        if error.code == "surface_not_set_up":
            shown_error["message"] = _("That surface is not set up on this hub; nothing was saved.")
            shown_error["hint"] = _("The hub's operator sets it up; until then it stays off.")
        return await render_settings(workspace_id, status=error.status, notify_error=shown_error)
    await flash(_("Notification preferences saved."))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id))


@blueprint.post("/w/<workspace_id>/settings/password")
@login_required
async def password(workspace_id: str) -> Any:
    user = await current_user()
    signed_in = await session_signed_in()
    assert user is not None and signed_in is not None
    await frame_for(user, workspace_id)
    form = await request.form
    if form.get("new_password", "") != form.get("repeat_password", ""):
        return await render_settings(
            workspace_id,
            status=422,
            password_error={
                "code": "passwords_differ",
                "message": _("The new password and its repetition differ; nothing was changed."),
                "hint": _("Type the same new password twice."),
            },
        )
    try:
        ended = await change_password(
            user,
            form.get("current_password", ""),
            form.get("new_password", ""),
            keep_session=signed_in.session_id,
            address=client_address(),
            via="web",
        )
    except HubError as error:
        return await render_settings(
            workspace_id, status=error.status, password_error=for_person(error)
        )
    await flash(
        _("Password changed. Your other sessions were signed out (%(count)s).", count=ended)
    )
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id))


@blueprint.post("/w/<workspace_id>/settings/tokens")
@login_required
async def create_token(workspace_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    name = (await request.form).get("name", "")
    token, secret = await create_api_token(user, name, address=client_address(), via="web")
    return await render_settings(
        workspace_id, status=201, new_token={"name": token.name, "secret": secret}
    )


@blueprint.post("/w/<workspace_id>/settings/tokens/<token_id>/revoke")
@login_required
async def revoke_token(workspace_id: str, token_id: str) -> Any:
    user = await current_user()
    assert user is not None
    await frame_for(user, workspace_id)
    try:
        await revoke_api_token(user, token_id, address=client_address(), via="web")
        await flash(_("Token revoked."))
    except HubError as error:
        await flash(said(error))
    return redirect(url_for("pages.settings.show", workspace_id=workspace_id))


async def notification_surfaces(user_id: str, preferences: dict[str, Any]) -> list[dict[str, Any]]:
    """Each surface as the Settings page shows it: ``ready`` (its boxes work), ``link_first``
    (running, but the person has not linked an account there), ``kept_here`` (email with no
    SMTP server: its boxes work, but mails stay on the hub's machine, and the page says so)
    or ``not_set_up`` (with what the operator sets), in a fixed order: this browser, email,
    Telegram, then the rest."""
    linked = await linked_surfaces(user_id)
    running = surfaces()
    operator_sets = runtime_of(current_app).not_set_up
    names = sorted(
        [*preferences["surfaces"], *preferences["surfacesNotSetUp"]],
        key=lambda name: (_SURFACE_ORDER.get(name, len(_SURFACE_ORDER)), name),
    )
    rows = []
    for name in names:
        if name in preferences["surfacesNotSetUp"]:
            state, cells = "not_set_up", dict.fromkeys(preferences["events"], False)
        elif running[name].needs_account and name not in linked:
            state, cells = "link_first", dict.fromkeys(preferences["events"], False)
        elif name == "email" and _mails_kept_here():
            state, cells = "kept_here", preferences["surfaces"][name]
        else:
            state, cells = "ready", preferences["surfaces"][name]
        rows.append(
            {"name": name, "state": state, "cells": cells, "set_up_with": operator_sets.get(name)}
        )
    return rows


_SURFACE_ORDER = {"web": 0, "email": 1, "telegram": 2, "slack": 3, "feishu": 4}


def _mails_kept_here() -> bool:
    """Email runs without an SMTP server: mails are written on the hub's machine
    (``/dev/outbox``), which reaches no one's mailbox."""
    channel = runtime_of(current_app).channels.get("email")
    return isinstance(channel, EmailChannel) and channel.files is not None


SESSION_TOTP_SETUP = "totp_setup"


async def two_factor_section(
    user: User, *, error: dict[str, Any] | None = None, recovery_codes: list[str] | None = None
) -> dict[str, Any]:
    """Settings → Two-factor sign-in: on or off, the secret being set up (kept in this
    browser's session until a first code confirms it), recovery codes just made."""
    pending = session.get(SESSION_TOTP_SETUP)
    setup = None
    if not is_on(user) and isinstance(pending, dict) and pending.get("user") == user.id:
        secret = str(pending["secret"])
        setup = {
            "secret": " ".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
            "qr": qr_svg(provisioning_uri(secret, user.email)),
        }
    return {
        "on": is_on(user),
        "codes_left": await recovery_codes_left(user) if is_on(user) else 0,
        "setup": setup,
        "error": error,
        "recovery_codes": recovery_codes,
    }


def _local_now(zone: str) -> str:
    return datetime.now(UTC).astimezone(ZoneInfo(zone)).strftime("%H:%M")


async def render_settings(
    workspace_id: str,
    *,
    status: int = 200,
    error: dict[str, Any] | None = None,
    notify_error: dict[str, Any] | None = None,
    password_error: dict[str, Any] | None = None,
    two_factor: dict[str, Any] | None = None,
    new_token: dict[str, str] | None = None,
    rule_error: dict[str, Any] | None = None,
    rule_form: dict[str, Any] | None = None,
    coding_rules_error: dict[str, Any] | None = None,
    coding_rules_text: str | None = None,
) -> Any:
    user = await current_user()
    assert user is not None
    frame = await frame_for(user, workspace_id)
    tokens = await ApiToken.filter(user_id=user.id, revoked_at=None).order_by("-created_at")
    preferences = await get_preferences(user.id)
    html = await render_template(
        "pages/settings.html",
        **frame.context(),
        languages=LANGUAGES,
        chosen_language=session.get("lang", ""),
        chosen_time_zone=session.get("tz", ""),
        time_zones=time_zone_names(),
        tokens=tokens,
        preferences=preferences,
        notification_surfaces=await notification_surfaces(user.id, preferences),
        notify_error=notify_error,
        password_error=password_error,
        two_factor=two_factor or await two_factor_section(user),
        notify_zone_now=_local_now(preferences["timezone"]),
        telegram=await telegram_section(user.id),
        feishu=await feishu_section(user.id),
        slack=await slack_section(user.id),
        new_token=new_token,
        error=error,
        policy_rules=await policy_rules_context(frame.workspace.id, user.id),
        push=await push_context(user.id),
        rule_error=rule_error,
        rule_form=rule_form or {},
        coding_rules_error=coding_rules_error,
        coding_rules_text=coding_rules_text,
        no_refresh=True,
    )
    return html, status
