"""Keeping the hub's own configured secrets out of its log.

The hub never logs a credential itself, but libraries do: python-telegram-bot logs its Bot
API URL at DEBUG, and that URL carries the bot token (``…/bot123:ABC/getMe``); an SMTP URL
may carry a password. A filter on the log handlers replaces every configured secret, and
anything shaped like a bot token in a URL, with ``[redacted]`` before a line is written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

REDACTED = "[redacted]"
# /bot<id>:<secret> in a Bot API URL, whatever token it is.
_BOT_TOKEN_IN_URL = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = _BOT_TOKEN_IN_URL.sub("/bot" + REDACTED, message)
        for secret in self.secrets:
            cleaned = cleaned.replace(secret, REDACTED)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def secrets_in_url(url: str | None) -> list[str]:
    """The password of a URL like ``smtp://user:password@host``, if it has one."""
    if not url:
        return []
    password = urlsplit(url).password
    return [password] if password else []


def install(secrets: Iterable[str]) -> None:
    """Redact ``secrets`` on every handler of the root logger (set up by then)."""
    redaction = RedactSecrets(secrets)
    for handler in logging.getLogger().handlers:
        for existing in [f for f in handler.filters if isinstance(f, RedactSecrets)]:
            handler.removeFilter(existing)
        handler.addFilter(redaction)
