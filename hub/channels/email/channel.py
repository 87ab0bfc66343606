"""The email channel: cards and notices as HTML + plain-text mail.

A mail cannot change once sent, so the outcome of a decided card is shown where the mail's
links lead: every link page shows "approved by … via …" once the card is decided. With no
SMTP server configured (the ``make run`` default) mails are written as ``.eml`` files under
``{data_dir}/outbox`` and listed at ``/dev/outbox`` (from loopback only: the files hold
working answer links).
"""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from typing import ClassVar

from quart import Blueprint, abort, request

from hub.channels.base import Capabilities, Channel, ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.email.render import card_message, notice_message
from hub.channels.email.transport import FileTransport, SmtpTransport, Transport
from hub.core.preferences import EVENTS

# Long reviews are read on the link page, where the whole content is shown.
_MAX_MAIL_CONTENT = 20_000
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class EmailChannel(Channel):
    name = "email"
    capabilities: ClassVar[Capabilities] = Capabilities(
        max_content_chars=_MAX_MAIL_CONTENT, updates_sent_cards=False
    )
    default_events = frozenset(EVENTS)

    def __init__(self, context: ChannelContext, transport: Transport | None = None) -> None:
        super().__init__(context)
        settings = context.settings
        self.files: FileTransport | None = None
        if transport is not None:
            self.transport = transport
        elif settings.smtp_url:
            self.transport = SmtpTransport(settings.smtp_url)
        else:
            self.files = FileTransport(settings.data_dir / "outbox")
            self.transport = self.files

    async def deliver_card(self, recipient: Recipient, card: Card) -> None:
        await self.transport.send(
            card_message(
                card, recipient, self.context, self.capabilities, self.context.settings.email_from
            )
        )

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        task_url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        await self.transport.send(
            notice_message(notice, recipient, self.context.settings.email_from, task_url)
        )

    def blueprint(self) -> Blueprint | None:
        if self.files is None:
            return None
        files = self.files
        blueprint = Blueprint("email_outbox", __name__)

        def _local_only() -> None:
            if request.remote_addr not in _LOOPBACK:
                abort(404)

        @blueprint.get("/dev/outbox")
        async def outbox() -> tuple[str, int, dict[str, str]]:
            _local_only()
            rows = []
            for path in files.messages():
                with path.open("rb") as handle:
                    mail = BytesParser(policy=policy.default).parse(handle, headersonly=True)
                rows.append(
                    f'<li><a href="/dev/outbox/{path.name}">{_escape(str(mail["Subject"]))}</a>'
                    f" → {_escape(str(mail['To']))}</li>"
                )
            body = "".join(rows) or "<li>No emails yet.</li>"
            page = f"<!doctype html><title>Outbox</title><h1>Outbox</h1><ul>{body}</ul>"
            return page, 200, {"Content-Type": "text/html; charset=utf-8"}

        @blueprint.get("/dev/outbox/<name>")
        async def message(name: str) -> tuple[str, int, dict[str, str]]:
            _local_only()
            path = files.directory / name
            if path.suffix != ".eml" or path.parent != files.directory or not path.is_file():
                abort(404)
            with path.open("rb") as handle:
                mail = BytesParser(policy=policy.default).parse(handle)
            html = mail.get_body(preferencelist=("html",))
            if html is not None:
                return str(html.get_content()), 200, {"Content-Type": "text/html; charset=utf-8"}
            plain = mail.get_body(preferencelist=("plain",))
            content = str(plain.get_content()) if plain is not None else ""
            return content, 200, {"Content-Type": "text/plain; charset=utf-8"}

        return blueprint


def _escape(value: str) -> str:
    from markupsafe import escape

    return str(escape(value))
