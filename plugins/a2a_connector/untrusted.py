"""Everything a remote agent sends is untrusted: reduce it to inert, bounded text.

A remote agent may be hostile or compromised, and its words reach people's screens, emails,
Telegram messages and other agents' prompts. So nothing from it is kept as markup, links
to follow, or structure the hub acts on without checking: text is stripped of control
characters (terminal escapes, bidirectional overrides that make text read backwards),
capped in length with a visible mark, and every structured field is type-checked with a
default for wrong types. Escaping for HTML stays the templates' job (autoescape): here the
text is kept as the remote wrote it, so "<script>" shows as the characters "<script>".
Prompt-injection text cannot be neutralised by filtering; it is kept as quoted data,
attributed to the remote agent, and never turned into instructions or actions.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

NAME_LIMIT = 200
LABEL_LIMIT = 100
DESCRIPTION_LIMIT = 2000
TEXT_LIMIT = 20_000  # a status message
ARTIFACT_TEXT_LIMIT = 200_000  # an artifact's text, once its chunks are put together
ID_LIMIT = 200
URL_LIMIT = 2000
MAX_SKILLS = 20
MAX_TAGS = 10
TRUNCATED = " … [truncated]"

# C0/C1 controls except tab and newline, and the bidirectional overrides and isolates.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f]")
_SAFE_ID = re.compile(r"^[\w.:\-]{1,200}$")


def text(value: Any, limit: int = TEXT_LIMIT, *, single_line: bool = False) -> str:
    """``value`` as plain text of at most ``limit`` characters; anything not a string → ""."""
    if not isinstance(value, str):
        return ""
    cleaned = _UNSAFE.sub("", unicodedata.normalize("NFC", value[: limit * 2]))
    if single_line:
        cleaned = " ".join(cleaned.split())
    cleaned = cleaned.strip()
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - len(TRUNCATED)].rstrip() + TRUNCATED
    return cleaned


def label(value: Any, limit: int = LABEL_LIMIT) -> str:
    return text(value, limit, single_line=True)


def identifier(value: Any) -> str | None:
    """A remote id (task, context, artifact) if it is a plain token, else ``None``."""
    if isinstance(value, str) and _SAFE_ID.match(value):
        return value
    return None


def web_url(value: Any) -> str | None:
    """An http(s) URL to show as text (never ``javascript:``, ``data:``, ...), else ``None``."""
    if not isinstance(value, str) or len(value) > URL_LIMIT:
        return None
    value = value.strip()
    if re.match(r"^https?://[^\s<>\"']+$", value, re.IGNORECASE):
        return value
    return None


def flag(value: Any) -> bool:
    return value is True


def strings(values: Any, *, limit: int, each: int) -> list[str]:
    if not isinstance(values, list):
        return []
    out = [label(v, each) for v in values[:limit]]
    return [v for v in out if v]


__all__ = ["flag", "identifier", "label", "strings", "text", "web_url"]
