"""Your notification preferences: which surfaces get which events, whether only high-risk
cards count, quiet hours, language."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool
from quart import Blueprint
from quart_schema import document_response

from hub.core.notify.preferences import get_preferences, update_preferences
from hub.host.identity import current_caller
from hub.web.api.answers import NotificationPreferences
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_notification_preferences", __name__, url_prefix="/api/v1")


class QuietHours(ApiModel):
    """Local times in your ``timezone``; ``letHighRiskThrough``: a high-risk card is sent
    during them instead of held until they end (left out: unchanged; at first false)."""

    start: str = Field(pattern=r"^\d{2}:\d{2}$", examples=["22:00"])
    end: str = Field(pattern=r"^\d{2}:\d{2}$", examples=["07:00"])
    let_high_risk_through: StrictBool | None = None


class PreferenceChanges(ApiModel):
    """Every field optional; only the ones sent change. ``surfaces`` maps a surface
    (``web``, ``email``, ``telegram``, ...) to ``{waiting?: bool, failed?: bool}``; a
    surface of ``surfacesNotSetUp`` is refused (409 ``surface_not_set_up``), an unknown one
    too (422 ``unknown_surface``). ``onlyHighRisk: true``: cards below high risk (a card
    without a risk counts as medium) are not sent anywhere outside the inbox, nor shown as
    browser notifications; failed tasks still are. ``quietHours: null`` turns quiet hours
    off. A refused change changes nothing."""

    surfaces: dict[str, dict[str, bool]] | None = None
    only_high_risk: StrictBool | None = None
    quiet_hours: QuietHours | None = None
    timezone: str | None = Field(None, max_length=64)
    language: str | None = Field(None, max_length=16)


@blueprint.get("/me/notification-preferences")
@document_response(NotificationPreferences)
async def preferences() -> dict[str, Any]:
    """Which surfaces get which events (``waiting`` for you, task ``failed``), with the
    defaults for any cell you have not set yourself; ``surfacesNotSetUp``: surfaces this hub
    has but its operator did not set up (e.g. Telegram without a bot token), which cannot be
    turned on; ``onlyHighRisk``; ``quietHours`` (``{start, end, letHighRiskThrough}`` or
    null) in ``timezone``."""
    caller = await current_caller()
    return await get_preferences(caller.user.id)


@blueprint.put("/me/notification-preferences")
@document_response(NotificationPreferences)
@json_body(PreferenceChanges)
async def change_preferences(body: PreferenceChanges) -> dict[str, Any]:
    """Change some preferences; answers with all of them."""
    caller = await current_caller()
    changes = body.model_dump(by_alias=True, exclude_unset=True)
    if body.only_high_risk is None:
        changes.pop("onlyHighRisk", None)  # null: unchanged, like a field left out
    quiet = changes.get("quietHours")
    if isinstance(quiet, dict) and quiet.get("letHighRiskThrough") is None:
        quiet.pop("letHighRiskThrough", None)
    return await update_preferences(caller.user.id, changes)
