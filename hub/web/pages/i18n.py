"""The UI's language and time zone (issue 4, "Language").

Every fixed string of the pages goes through gettext with the catalogues the channels
share (``hub.i18n``: English is the source language, Simplified Chinese is ``zh_Hans``).
The language is the person's own setting when they chose one, otherwise the
best match of the browser's ``Accept-Language``. Times are shown in the person's time zone:
their setting, else the zone the browser reported (``tz`` cookie set by ``app.js``), else UTC.
Agent content is never translated: it is shown as sent.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel import Locale
from babel.dates import format_date, format_datetime, format_time, format_timedelta
from babel.numbers import format_decimal
from quart import Quart, g, request, session

from hub.i18n import DEFAULT_LANGUAGE, duration, install_gettext, use_language
from hub.i18n import gettext as gettext  # the pages' ``_``

# What a person can pick, in each language's own name.
LANGUAGES: dict[str, str] = {"en": "English", "zh_Hans": "简体中文"}
TZ_COOKIE = "tz"


def language_from_header(header: str | None) -> str:
    """The best UI language for an ``Accept-Language`` value, in its order of preference."""
    for part in (header or "").split(","):
        tag = part.split(";")[0].strip().lower().replace("_", "-")
        if tag.startswith("zh"):
            # Traditional-script tags are better served by English than by simplified text.
            if tag in ("zh-tw", "zh-hk", "zh-mo") or "hant" in tag:
                continue
            return "zh_Hans"
        if tag.startswith("en"):
            return "en"
    return DEFAULT_LANGUAGE


def current_language() -> str:
    chosen = session.get("lang")
    if chosen in LANGUAGES:
        return str(chosen)
    return language_from_header(request.headers.get("Accept-Language"))


def valid_time_zone(name: str | None) -> str | None:
    if not name or len(name) > 64:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


def current_time_zone() -> str:
    return (
        valid_time_zone(session.get("tz"))
        or valid_time_zone(request.cookies.get(TZ_COOKIE))
        or "UTC"
    )


@cache
def time_zone_names() -> list[str]:
    return sorted(z for z in available_timezones() if "/" in z or z == "UTC")


def local_time(value: datetime | str | None, style: str = "medium") -> str:
    """A moment in the person's time zone and language; empty for ``None``."""
    if value is None or value == "":
        return ""
    moment, locale = _local(value)
    return format_datetime(moment, format=style, tzinfo=moment.tzinfo, locale=locale)


def relative_time(value: datetime | str | None, now: datetime | None = None) -> str:
    """How far ``value`` is from now, in the person's language: "3 minutes ago", "in 2
    hours" (the scripts keep it current from the element's ``datetime``)."""
    if value is None or value == "":
        return ""
    moment, locale = _local(value)
    delta = moment - (now or datetime.now(UTC))
    return format_timedelta(delta, add_direction=True, threshold=1.5, locale=locale)


def _local(value: datetime | str) -> tuple[datetime, Locale]:
    """A stored moment (aware, naive UTC, or ISO text) in the person's zone and locale."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    zone = ZoneInfo(getattr(g, "time_zone", None) or "UTC")
    return value.astimezone(zone), Locale.parse(getattr(g, "language", None) or DEFAULT_LANGUAGE)


def local_date(value: datetime | str | None) -> str:
    """The day of a moment in the person's time zone and language (a timeline's heading)."""
    if value is None or value == "":
        return ""
    moment, locale = _local(value)
    return format_date(moment, format="full", locale=locale)


def local_clock(value: datetime | str | None) -> str:
    """The time of day of a moment, for a line under its day's heading."""
    if value is None or value == "":
        return ""
    moment, locale = _local(value)
    return format_time(moment, format="short", tzinfo=moment.tzinfo, locale=locale)


def iso_time(value: datetime | str | None) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def count_text(value: int) -> str:
    """A count as a badge or a heading shows it, grouped as the person's language groups
    digits ("12,040")."""
    return format_decimal(value, locale=getattr(g, "language", None) or DEFAULT_LANGUAGE)


def init_app(app: Quart) -> None:
    install_gettext(app.jinja_env)
    app.jinja_env.filters["localtime"] = local_time
    app.jinja_env.filters["isotime"] = iso_time
    app.jinja_env.filters["localclock"] = local_clock
    app.jinja_env.filters["relative"] = relative_time
    app.jinja_env.filters["duration"] = duration
    app.jinja_env.filters["count"] = count_text

    @app.before_request
    async def _choose_language() -> None:
        g.language = current_language()
        use_language(g.language)
        g.time_zone = current_time_zone()

    @app.context_processor
    async def _language_context() -> dict[str, Any]:
        language = getattr(g, "language", DEFAULT_LANGUAGE)
        return {
            "ui_language": language,
            "html_lang": "zh-Hans" if language == "zh_Hans" else "en",
            "ui_time_zone": getattr(g, "time_zone", "UTC"),
        }
