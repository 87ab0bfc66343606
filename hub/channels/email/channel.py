"""The email channel: cards and notices as HTML + plain-text mail.

A mail cannot change once sent, so the outcome of a decided card is shown where the mail's
links lead: every link page shows "approved by … via …" once the card is decided. Two or
more approvals of one task in a person's mail bring a batch mail answering them together
(``hub.channels.email.batches``). With no
SMTP server configured (the ``make run`` default) mails are written as ``.eml`` files under
``{data_dir}/outbox`` and listed at ``/dev/outbox`` for the signed-in person, who sees the
mails addressed to them only (the files hold working answer links).
"""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from email.utils import parseaddr
from typing import Any, ClassVar

from quart import Blueprint, abort

from hub.channels.base import Capabilities, Channel, ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.email.batches import batch_mail, batch_to_offer, mark_sent, remember_mail
from hub.channels.email.render import (
    card_message,
    invitation_message,
    notice_message,
    password_reset_message,
)
from hub.channels.email.transport import FileTransport, SmtpTransport, Transport
from hub.channels.invitations import InvitationMail
from hub.core.notify.preferences import EVENTS, settings_for
from hub.core.people.password_reset import RESET_TTL, ResetMail

# Long reviews are read on the link page, where the whole content is shown.
_MAX_MAIL_CONTENT = 20_000
# The saved mails are shown as they were sent: no script may run, links still work.
_PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": "sandbox allow-popups allow-top-navigation-by-user-activation; "
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "X-Content-Type-Options": "nosniff",
}


class EmailChannel(Channel):
    name = "email"
    capabilities: ClassVar[Capabilities] = Capabilities(
        max_content_chars=_MAX_MAIL_CONTENT, updates_sent_cards=False
    )
    default_events = frozenset(EVENTS)
    set_up_with = "LINEUP_SMTP_URL"

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
        message = card_message(
            card, recipient, self.context, self.capabilities, self.context.settings.email_from
        )
        await self.transport.send(message)
        await remember_mail(recipient, card, str(message["Message-ID"]))
        # Two or more approvals of the task in this person's mail: one more mail answers
        # them together (a retry after a failure here sends only what did not go).
        batch = await batch_to_offer(recipient, card)
        if batch is not None:
            sender = self.context.settings.email_from
            mail = await batch_mail(batch, recipient, self.context, sender)
            await self.transport.send(mail)
            await mark_sent(batch, mail)

    async def notify(self, recipient: Recipient, notice: Notice) -> None:
        base = self.context.settings.resolved_public_url
        task_url = f"{base}/w/{notice.workspace_id}/tasks/{notice.task_id}"
        await self.transport.send(
            notice_message(notice, recipient, self.context.settings.email_from, task_url)
        )

    async def send_invitation(self, invitation: InvitationMail) -> None:
        await self.transport.send(invitation_message(invitation, self.context.settings.email_from))

    async def send_password_reset(self, mail: ResetMail) -> None:
        """The reset link, straight to the address (not through the outbox: the link is
        good for minutes, and a retry hours later would only mail a dead one)."""
        language = (await settings_for(mail.user_id)).language or "en"
        url = self.context.settings.resolved_public_url + mail.path
        await self.transport.send(
            password_reset_message(
                mail,
                url,
                language,
                self.context.settings.email_from,
                ttl_minutes=int(RESET_TTL.total_seconds() // 60),
            )
        )

    def blueprint(self) -> Blueprint | None:
        if self.files is None:
            return None
        files = self.files
        blueprint = Blueprint("email_outbox", __name__)

        async def _readable_by_caller(path: Any) -> bool:
            with path.open("rb") as handle:
                mail = BytesParser(policy=policy.default).parse(handle, headersonly=True)
            return _recipient(mail) == await _caller_email()

        @blueprint.get("/dev/outbox")
        async def outbox() -> tuple[str, int, dict[str, str]]:
            me = await _caller_email()
            rows = []
            for path in files.messages():
                with path.open("rb") as handle:
                    mail = BytesParser(policy=policy.default).parse(handle, headersonly=True)
                if _recipient(mail) != me:
                    continue
                rows.append(
                    f'<li><a href="/dev/outbox/{path.name}">{_escape(str(mail["Subject"]))}</a>'
                    f" → {_escape(str(mail['To']))}</li>"
                )
            body = "".join(rows) or "<li>No emails yet.</li>"
            page = f"<!doctype html><title>Outbox</title><h1>Outbox</h1><ul>{body}</ul>"
            return page, 200, _PAGE_HEADERS

        @blueprint.get("/dev/outbox/<name>")
        async def message(name: str) -> tuple[str, int, dict[str, str]]:
            path = files.directory / name
            if path.suffix != ".eml" or path.parent != files.directory or not path.is_file():
                abort(404)
            if not await _readable_by_caller(path):
                abort(404)
            with path.open("rb") as handle:
                mail = BytesParser(policy=policy.default).parse(handle)
            html = mail.get_body(preferencelist=("html",))
            if html is not None:
                return str(html.get_content()), 200, _PAGE_HEADERS
            plain = mail.get_body(preferencelist=("plain",))
            content = str(plain.get_content()) if plain is not None else ""
            return content, 200, {**_PAGE_HEADERS, "Content-Type": "text/plain; charset=utf-8"}

        return blueprint


async def _caller_email() -> str:
    """The signed-in person's address: each sees only the mails sent to them. (A check of
    the client's address would not do: behind a reverse proxy every request is local.)"""
    from hub.host.identity import current_caller

    return str((await current_caller()).user.email).lower()


def _recipient(mail: Any) -> str:
    return parseaddr(str(mail["To"]))[1].lower()


def _escape(value: str) -> str:
    from markupsafe import escape

    return str(escape(value))
