"""The gettext catalogues every surface speaks from: the web UI's pages and the channels'
emails, Telegram messages and link pages.

The catalogues live in ``hub/web/translations`` (English is the source language,
Simplified Chinese is ``zh_Hans``); ``hub/web/translations/update.py`` extracts the strings
of both the pages and the channels into them. Agent content is never translated.

A string is translated into the language in effect in the current task. The web UI sets it
for each request (the reader's choice or their browser's). A channel renders outside any
request, for a person who is usually not the one browsing, so it speaks the recipient's
stored preference: ``with speaking(recipient.language): ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

from babel import Locale
from babel.dates import format_timedelta
from babel.support import NullTranslations, Translations
from jinja2 import Environment

TRANSLATIONS_DIR = Path(__file__).resolve().parent / "web" / "translations"
DEFAULT_LANGUAGE = "en"

_in_effect: ContextVar[str] = ContextVar("language_in_effect", default=DEFAULT_LANGUAGE)


def catalogue_name(language: str | None) -> str:
    """The catalogue's directory for a language: preferences store BCP 47 tags
    (``zh-Hans``), gettext directories are named ``zh_Hans``; both are accepted."""
    return (language or DEFAULT_LANGUAGE).replace("-", "_")


def language_tag(language: str | None) -> str:
    """The BCP 47 tag (``zh-Hans``) for ``lang`` attributes and stored preferences."""
    return catalogue_name(language).replace("_", "-")


@cache
def translations_for(language: str) -> NullTranslations:
    name = catalogue_name(language)
    if name == DEFAULT_LANGUAGE:
        return NullTranslations()
    # A language without a catalogue falls back to the English source strings.
    return Translations.load(str(TRANSLATIONS_DIR), [name], domain="messages")


def language_in_effect() -> str:
    return _in_effect.get()


def use_language(language: str | None) -> None:
    """Make ``language`` the one in effect for the rest of the current task (one request)."""
    _in_effect.set(catalogue_name(language))


@contextmanager
def speaking(language: str | None) -> Iterator[None]:
    """Translate into ``language`` inside the block, then back to what was in effect."""
    token = _in_effect.set(catalogue_name(language))
    try:
        yield
    finally:
        _in_effect.reset(token)


def gettext(message: str, **variables: Any) -> str:
    text = translations_for(_in_effect.get()).gettext(message)
    return text % variables if variables else text


def ngettext(singular: str, plural: str, n: int, **variables: Any) -> str:
    text = translations_for(_in_effect.get()).ngettext(singular, plural, n)
    return text % {"num": n, **variables}


def duration(seconds: float | None) -> str:
    """A delay in the language in effect: "90 seconds", "5 minutes", "2 hours"."""
    if not seconds:
        return ""
    locale = Locale.parse(_in_effect.get())
    return format_timedelta(timedelta(seconds=seconds), threshold=1.5, locale=locale)


def install_gettext(env: Environment) -> None:
    """Let ``env``'s templates say ``{{ _("...", name=value) }}`` in the language in effect;
    with autoescaping on, the values are escaped and the translation is not."""
    env.add_extension("jinja2.ext.i18n")
    env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext, ngettext, newstyle=True
    )


__all__ = [
    "DEFAULT_LANGUAGE",
    "TRANSLATIONS_DIR",
    "catalogue_name",
    "duration",
    "gettext",
    "install_gettext",
    "language_in_effect",
    "language_tag",
    "ngettext",
    "speaking",
    "translations_for",
    "use_language",
]
