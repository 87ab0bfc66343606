"""The UI's language and time zone (issue 4, "Language").

Every fixed string of the pages goes through gettext with catalogues under
``hub/web/translations`` (English is the source language, Simplified Chinese is
``zh_Hans``). The language is the person's own setting when they chose one, otherwise the
best match of the browser's ``Accept-Language``. Times are shown in the person's time zone:
their setting, else the zone the browser reported (``tz`` cookie set by ``app.js``), else UTC.
Agent content is never translated: it is shown as sent.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel import Locale
from babel.dates import format_datetime, format_timedelta
from babel.support import NullTranslations, Translations
from quart import Quart, g, request, session

TRANSLATIONS_DIR = Path(__file__).resolve().parent.parent / "translations"
DEFAULT_LANGUAGE = "en"
# What a person can pick, in each language's own name.
LANGUAGES: dict[str, str] = {"en": "English", "zh_Hans": "简体中文"}
TZ_COOKIE = "tz"


@cache
def translations_for(language: str) -> NullTranslations:
    if language == DEFAULT_LANGUAGE:
        return NullTranslations()
    return Translations.load(str(TRANSLATIONS_DIR), [language], domain="messages")


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


def gettext(message: str, **variables: Any) -> str:
    text = _translations().gettext(message)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, n: int, **variables: Any) -> str:
    text = _translations().ngettext(singular, plural, n)
    return text % {"num": n, **variables}


def _translations() -> NullTranslations:
    language = getattr(g, "language", None) or DEFAULT_LANGUAGE
    return translations_for(language)


def local_time(value: datetime | str | None, style: str = "medium") -> str:
    """A moment in the person's time zone and language; empty for ``None``."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    zone = ZoneInfo(getattr(g, "time_zone", None) or "UTC")
    locale = Locale.parse(getattr(g, "language", None) or DEFAULT_LANGUAGE)
    return format_datetime(value, format=style, tzinfo=zone, locale=locale)


def iso_time(value: datetime | str | None) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def duration(seconds: int | float | None) -> str:
    """A delay in the person's language: "90 seconds", "5 minutes", "2 hours"."""
    if not seconds:
        return ""
    locale = Locale.parse(getattr(g, "language", None) or DEFAULT_LANGUAGE)
    return format_timedelta(timedelta(seconds=seconds), threshold=1.5, locale=locale)


def init_app(app: Quart) -> None:
    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext, ngettext, newstyle=True
    )
    app.jinja_env.filters["localtime"] = local_time
    app.jinja_env.filters["isotime"] = iso_time
    app.jinja_env.filters["duration"] = duration

    @app.before_request
    async def _choose_language() -> None:
        g.language = current_language()
        g.time_zone = current_time_zone()

    @app.context_processor
    async def _language_context() -> dict[str, Any]:
        language = getattr(g, "language", DEFAULT_LANGUAGE)
        return {
            "ui_language": language,
            "html_lang": "zh-Hans" if language == "zh_Hans" else "en",
            "ui_time_zone": getattr(g, "time_zone", "UTC"),
        }
