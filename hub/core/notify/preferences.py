"""Who wants to hear about what, where: per-person notification preferences.

A preference is a grid of *surfaces* (``web`` for browser notifications, ``email``,
``telegram``, and any channel a plugin adds) × *events* (``waiting`` — a card waits for
you — and ``failed`` — a task failed), plus "only high-risk cards", optional quiet hours
(which may let high-risk cards through) and a language.

The core does not know which channels run: the channel layer declares each surface at start
(``declare_surface``) with its defaults, e.g. email on for both events, and names the ones
this hub has but did not set up (``declare_surface_not_set_up``: Telegram without a bot
token), which no one can turn on. A person's own choices override the defaults, one cell at
a time; only their choices are stored, so a surface added later starts at its defaults.

Risk and quiet hours are decided once, by ``due_at``: whether news about a card reaches the
person outside the inbox at all, and when. The rows written for the outbox
(``hub.core.notify.notifications``) and the browser's notifications (``wants``) both ask it.

The web UI's Settings page reads ``preferences_view`` and writes ``update_preferences``; the
browser asks ``wants(user_id, "web", "waiting")`` before showing a notification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hub.core.errors import Conflict, InvalidInput
from hub.core.store.notification_models import NotificationSettings
from hub.protocol.interactions import Risk, risk_of

EVENTS = ("waiting", "failed")
LANGUAGES = ("en", "zh-Hans")
_HH_MM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


@dataclass(frozen=True, slots=True)
class Surface:
    """A place notifications can go, as the channel behind it declares it.

    ``needs_account``: only people who linked an account there (Telegram) can be reached.
    ``outbox``: notifications for it are rows for the outbox worker; ``web`` is live instead
    (the browser shows what arrives over its socket) and only consults the preferences.
    ``card_after``: how long a new card waits before it is sent here; one decided meanwhile
    is not sent at all (the person answered where they already were).
    """

    name: str
    defaults: frozenset[str] = frozenset(EVENTS)
    needs_account: bool = False
    outbox: bool = True
    card_after: timedelta = timedelta(0)


_SURFACES: dict[str, Surface] = {"web": Surface("web", outbox=False)}
# Surfaces this hub knows but its operator did not set up: shown as such, never turned on.
_NOT_SET_UP: set[str] = set()


def declare_surface(surface: Surface) -> None:
    _SURFACES[surface.name] = surface
    _NOT_SET_UP.discard(surface.name)


def declare_surface_not_set_up(name: str) -> None:
    if name not in _SURFACES:
        _NOT_SET_UP.add(name)


def withdraw_surface(name: str) -> None:
    if name != "web":
        _SURFACES.pop(name, None)
        _NOT_SET_UP.discard(name)


def surfaces() -> dict[str, Surface]:
    return dict(_SURFACES)


def surfaces_not_set_up() -> list[str]:
    return sorted(_NOT_SET_UP)


async def settings_for(user_id: str, connection: Any = None) -> NotificationSettings:
    """The person's stored settings, or an unsaved row holding the defaults."""
    query = NotificationSettings.filter(user_id=user_id)
    if connection is not None:
        query = query.using_db(connection)
    row = await query.first()
    return row or NotificationSettings(user_id=user_id, surfaces={}, timezone="UTC", language="en")


def enabled(settings: NotificationSettings, surface: str, event: str) -> bool:
    declared = _SURFACES.get(surface)
    if declared is None:
        return False
    choice = (settings.surfaces or {}).get(surface, {}).get(event)
    return bool(choice) if choice is not None else event in declared.defaults


def due_at(
    settings: NotificationSettings, event: str, risk: Risk | str | None, now: datetime
) -> datetime | None:
    """When news of ``event`` may reach the person outside the inbox: ``now``, the end of
    their quiet hours, or never (None).

    ``risk`` is the card's (None: it states none, and counts as medium; a failure has none).
    Only high-risk cards count for a person who asked for that; failures always do. Quiet
    hours hold everything back, except a high-risk card when the person lets those through.
    """
    high = risk_of(risk) is Risk.HIGH
    if event == "waiting" and settings.only_high_risk and not high:
        return None
    if event == "waiting" and high and settings.high_risk_in_quiet_hours:
        return now
    return quiet_until(settings, now) or now


async def wants(user_id: str, surface: str, event: str, risk: Risk | str | None = None) -> bool:
    """Whether ``user_id`` wants ``event`` notifications on ``surface`` right now, for a
    card of ``risk`` (see ``due_at``: quiet hours and "only high risk" count)."""
    return wanted(await settings_for(user_id), surface, event, risk)


def wanted(
    settings: NotificationSettings, surface: str, event: str, risk: Risk | str | None = None
) -> bool:
    """``wants``, for settings already read (a page asks of several events at once)."""
    now = datetime.now(UTC)
    return enabled(settings, surface, event) and due_at(settings, event, risk, now) == now


def quiet_until(settings: NotificationSettings, now: datetime) -> datetime | None:
    """When the person's quiet hours end, if ``now`` falls in them; otherwise None."""
    if not settings.quiet_start or not settings.quiet_end:
        return None
    zone = ZoneInfo(settings.timezone or "UTC")
    local = now.astimezone(zone)
    start, end = _parse(settings.quiet_start), _parse(settings.quiet_end)
    moment = local.time().replace(second=0, microsecond=0)
    overnight = start > end  # 22:00–07:00 crosses midnight
    inside = (start <= moment or moment < end) if overnight else (start <= moment < end)
    if not inside:
        return None
    ends = local.replace(hour=end.hour, minute=end.minute, second=0, microsecond=0)
    if ends <= local:
        ends += timedelta(days=1)
    return ends


def _parse(value: str) -> time:
    hours, minutes = value.split(":")
    return time(int(hours), int(minutes))


def preferences_view(settings: NotificationSettings) -> dict[str, Any]:
    """The JSON shape of ``GET /api/v1/me/notification-preferences``."""
    quiet = None
    if settings.quiet_start and settings.quiet_end:
        quiet = {
            "start": settings.quiet_start,
            "end": settings.quiet_end,
            "letHighRiskThrough": bool(settings.high_risk_in_quiet_hours),
        }
    return {
        "surfaces": {
            name: {event: enabled(settings, name, event) for event in EVENTS}
            for name in sorted(_SURFACES)
        },
        "surfacesNotSetUp": surfaces_not_set_up(),
        "events": list(EVENTS),
        "onlyHighRisk": bool(settings.only_high_risk),
        "quietHours": quiet,
        "timezone": settings.timezone or "UTC",
        "language": settings.language or "en",
        "languages": list(LANGUAGES),
    }


async def get_preferences(user_id: str) -> dict[str, Any]:
    return preferences_view(await settings_for(user_id))


async def update_preferences(user_id: str, changes: dict[str, Any]) -> dict[str, Any]:
    """Apply the fields present in ``changes`` (the shape of ``preferences_view``; every
    field optional; ``quietHours.letHighRiskThrough`` left out keeps its value) and return
    the new view. Unknown surfaces or events, and any cell of a surface this hub did not set
    up, are refused; a refused change changes nothing."""
    if not isinstance(changes, dict):
        raise InvalidInput("Preferences must be a JSON object.", code="invalid_preferences")
    settings = await settings_for(user_id)
    chosen = {name: dict(cells) for name, cells in (settings.surfaces or {}).items()}
    for name, cells in (changes.get("surfaces") or {}).items():
        if name in _NOT_SET_UP:
            raise Conflict(
                f"{name.capitalize()} is not set up on this hub, so it cannot be turned on or off.",
                code="surface_not_set_up",
                hint="The hub's operator sets it up (see docs/channels.md); until then "
                "leave it out.",
            )
        if name not in _SURFACES:
            raise InvalidInput(
                f"{name!r} is not a notification surface.",
                code="unknown_surface",
                hint=f"Use one of: {', '.join(sorted(_SURFACES))}.",
            )
        if not isinstance(cells, dict):
            raise InvalidInput(f"surfaces.{name} must map events to true/false.")
        for event, value in cells.items():
            if event not in EVENTS or not isinstance(value, bool):
                raise InvalidInput(
                    f"surfaces.{name}.{event} must be one of {', '.join(EVENTS)} → true/false.",
                    code="invalid_preferences",
                )
            chosen.setdefault(name, {})[event] = value
    settings.surfaces = chosen
    if "onlyHighRisk" in changes:
        settings.only_high_risk = _checked_bool(changes["onlyHighRisk"], "onlyHighRisk")
    if "quietHours" in changes:
        quiet = changes["quietHours"]
        settings.quiet_start, settings.quiet_end = _checked_quiet_hours(quiet)
        if isinstance(quiet, dict) and "letHighRiskThrough" in quiet:
            settings.high_risk_in_quiet_hours = _checked_bool(
                quiet["letHighRiskThrough"], "quietHours.letHighRiskThrough"
            )
    if "timezone" in changes:
        settings.timezone = _checked_timezone(changes["timezone"])
    if "language" in changes:
        # The web UI names Simplified Chinese zh_Hans (gettext style); both mean the same.
        changes = {**changes, "language": str(changes["language"]).replace("_", "-")}
        if changes["language"] not in LANGUAGES:
            raise InvalidInput(
                f"Language must be one of: {', '.join(LANGUAGES)}.", code="unknown_language"
            )
        settings.language = changes["language"]
    await settings.save()
    return preferences_view(settings)


def _checked_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false.", code="invalid_preferences")
    return value


def _checked_quiet_hours(value: Any) -> tuple[str | None, str | None]:
    if value is None:
        return None, None
    if not isinstance(value, dict):
        raise InvalidInput(
            "quietHours must be null or {start, end, letHighRiskThrough?}.",
            code="invalid_preferences",
        )
    start, end = value.get("start"), value.get("end")
    if not all(isinstance(v, str) and _HH_MM.match(v) for v in (start, end)) or start == end:
        raise InvalidInput(
            "Quiet hours need a start and an end as HH:MM, different from each other.",
            code="invalid_preferences",
            hint='For example {"start": "22:00", "end": "07:00"}.',
        )
    return start, end


def _checked_timezone(value: Any) -> str:
    try:
        ZoneInfo(str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            f"{value!r} is not a time zone.",
            code="unknown_timezone",
            hint="Use an IANA name such as Europe/Berlin or Asia/Shanghai.",
        ) from None
    return str(value)
