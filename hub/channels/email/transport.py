"""Where email goes: an SMTP server (aiosmtplib), or ``.eml`` files when none is configured.

Each message carries a ``Message-ID`` fixed by what it is about (card × person), so a
message sent again after a crash between "SMTP accepted" and "marked sent" is recognisably
the same mail; the file transport names the file after it, so a repeat overwrites itself.
"""

from __future__ import annotations

import hashlib
from email.message import EmailMessage
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from hub.channels.registry import MissingExtra


class Transport(Protocol):
    async def send(self, message: EmailMessage) -> None: ...


class SmtpTransport:
    """``smtp://user:pass@host:port`` (STARTTLS when offered) or ``smtps://`` (TLS)."""

    def __init__(self, url: str, timeout_s: float = 15.0) -> None:
        try:
            import aiosmtplib  # noqa: F401 - fail at start, not at the first mail
        except ImportError:
            raise MissingExtra("email", "email", "aiosmtplib") from None
        parts = urlsplit(url)
        self.hostname = parts.hostname or "localhost"
        self.implicit_tls = parts.scheme == "smtps"
        self.port = parts.port or (465 if self.implicit_tls else 25)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout_s = timeout_s

    async def send(self, message: EmailMessage) -> None:
        import aiosmtplib

        await aiosmtplib.send(
            message,
            hostname=self.hostname,
            port=self.port,
            username=self.username,
            password=self.password,
            use_tls=self.implicit_tls,
            # Opportunistic STARTTLS: used when the server offers it, local relays may not.
            start_tls=None,
            timeout=self.timeout_s,
        )


class FileTransport:
    """Writes each mail to ``directory`` as an ``.eml`` file, for a developer to read."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_for(self, message: EmailMessage) -> Path:
        digest = hashlib.sha256(str(message["Message-ID"]).encode()).hexdigest()[:16]
        return self.directory / f"{digest}.eml"

    async def send(self, message: EmailMessage) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(message)
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(message.as_bytes())
        temporary.replace(path)  # a reader never sees half a mail

    def messages(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*.eml"), key=lambda p: p.stat().st_mtime, reverse=True)
