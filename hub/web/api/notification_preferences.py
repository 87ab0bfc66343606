"""Your notification preferences: which surfaces get which events, quiet hours, language."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint
from quart_schema import document_response

from hub.core.notify.preferences import get_preferences, update_preferences
from hub.host.identity import current_caller
from hub.web.api.answers import NotificationPreferences
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_notification_preferences", __name__, url_prefix="/api/v1")


class QuietHours(ApiModel):
    start: str = Field(pattern=r"^\d{2}:\d{2}$", examples=["22:00"])
    end: str = Field(pattern=r"^\d{2}:\d{2}$", examples=["07:00"])


class PreferenceChanges(ApiModel):
    """Every field optional; only the ones sent change. ``surfaces`` maps a surface
    (``web``, ``email``, ``telegram``, ...) to ``{waiting?: bool, failed?: bool}``;
    ``quietHours: null`` turns quiet hours off."""

    surfaces: dict[str, dict[str, bool]] | None = None
    quiet_hours: QuietHours | None = None
    timezone: str | None = Field(None, max_length=64)
    language: str | None = Field(None, max_length=16)


@blueprint.get("/me/notification-preferences")
@document_response(NotificationPreferences)
async def preferences() -> dict[str, Any]:
    """Which surfaces get which events (``waiting`` for you, task ``failed``); the defaults
    for any cell you have not set yourself."""
    caller = await current_caller()
    return await get_preferences(caller.user.id)


@blueprint.put("/me/notification-preferences")
@document_response(NotificationPreferences)
@json_body(PreferenceChanges)
async def change_preferences(body: PreferenceChanges) -> dict[str, Any]:
    """Change some preferences; answers with all of them."""
    caller = await current_caller()
    changes = body.model_dump(by_alias=True, exclude_unset=True)
    return await update_preferences(caller.user.id, changes)
