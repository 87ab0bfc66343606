"""Cards and notices as mail: an HTML part and a plain-text part from the same Card.

Structure follows spec §7.3 (why → impact → what you can do → details); risk is a word and
an icon. Every option is its own signed link (``ChannelContext.card_link``); cards answered
with text or several ticks get one link to a form. Agent text is escaped, never trusted as
markup. Each mail is rendered in its recipient's language.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formataddr
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from hub.channels.base import Capabilities, ChannelContext, Recipient
from hub.channels.cards import Card, Notice
from hub.channels.invitations import InvitationMail
from hub.channels.wording import agent_text, outcome_text, policy_lines, risk_text, when
from hub.core.people.password_reset import ResetMail
from hub.i18n import gettext as _
from hub.i18n import install_gettext, speaking

_ENV = Environment(
    loader=PackageLoader("hub.channels.email", "templates"),
    autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False),
    trim_blocks=True,
    lstrip_blocks=True,
)
install_gettext(_ENV)


@dataclass(frozen=True, slots=True)
class ActionLink:
    label: str
    url: str
    description: str | None = None


def card_actions(
    card: Card, recipient: Recipient, context: ChannelContext, capabilities: Capabilities
) -> tuple[list[ActionLink], str | None]:
    """Per-option links, or one link to the form; plus a link to the full card when the
    mail cannot carry it all (never a partial set of answers)."""

    def link(option_id: str | None = None) -> str:
        # An option link is bound to the action this mail shows: a changed one is refused.
        return context.card_link(
            card, recipient, via="email", option_id=option_id, action_hash=card.action_hash
        )

    if not capabilities.can_render(card):
        return [], link()
    if card.takes_text or card.multiple:
        return [ActionLink(_("Answer"), link())], None
    actions = [ActionLink(o.label, link(o.id), o.description) for o in card.options]
    if card.action and card.action.editable:
        # Mail cannot hold a form: editing happens on the web page behind a signed link.
        edit = context.card_link(card, recipient, via="web")
        actions.append(ActionLink(_("Edit and approve on the web"), edit))
    return actions, None


def _values(card: Card, recipient: Recipient, **extra: Any) -> dict[str, Any]:
    return {
        "card": card,
        "lang": recipient.language,
        "risk": risk_text(card),
        "agent": agent_text(card),
        "outcome": outcome_text(card),
        "expires": when(card.expires_at) if card.expires_at else None,
        "policy": policy_lines(card),
        "recipient": recipient,
        **extra,
    }


def card_message(
    card: Card,
    recipient: Recipient,
    context: ChannelContext,
    capabilities: Capabilities,
    sender: str,
) -> EmailMessage:
    with speaking(recipient.language):
        actions, web_link = card_actions(card, recipient, context, capabilities)
        values = _values(card, recipient, actions=actions, web_link=web_link)
        return _message(
            _("%(agent)s needs you: %(title)s", agent=values["agent"], title=card.title),
            sender,
            recipient,
            _ENV.get_template("email/card.txt").render(values),
            _ENV.get_template("email/card.html").render(values),
            f"card.{card.id}.{recipient.user_id}",
        )


def batch_message(
    cards: list[Card],
    task_title: str,
    recipient: Recipient,
    sender: str,
    *,
    links: dict[str, str],
    key: str,
) -> EmailMessage:
    """Several approvals of one task in one mail: each card in brief, then a link to
    approve them all, one to reject them all and one to answer them item by item."""
    with speaking(recipient.language):
        count = len(cards)
        values = {
            "cards": [
                {"card": card, "risk": risk_text(card), "outcome": outcome_text(card)}
                for card in cards
            ],
            "lang": recipient.language,
            "task": task_title,
            "high_risk": any(card.is_high_risk for card in cards),
            "actions": [
                ActionLink(_("Approve all (%(count)s)", count=count), links["approve"]),
                ActionLink(_("Reject all (%(count)s)", count=count), links["reject"]),
                ActionLink(_("Answer item by item"), links["pick"]),
            ],
        }
        return _message(
            _("%(count)s approvals wait in “%(task)s”", count=count, task=task_title),
            sender,
            recipient,
            _ENV.get_template("email/batch.txt").render(values),
            _ENV.get_template("email/batch.html").render(values),
            key,
        )


def notice_message(
    notice: Notice, recipient: Recipient, sender: str, task_url: str
) -> EmailMessage:
    with speaking(recipient.language):
        values = {
            "notice": notice,
            "lang": recipient.language,
            "agent": notice.agent_name or _("An agent"),
            "task_url": task_url,
        }
        return _message(
            _("Task failed: %(title)s", title=notice.task_title),
            sender,
            recipient,
            _ENV.get_template("email/notice.txt").render(values),
            _ENV.get_template("email/notice.html").render(values),
            f"{notice.kind}.{notice.task_id}.{recipient.user_id}",
        )


def role_text(role: str) -> str:
    names = {
        "owner": _("an owner"),
        "member": _("a member"),
        "viewer": _("a viewer (can read, not answer)"),
    }
    return names[role]


def invitation_message(invitation: InvitationMail, sender: str) -> EmailMessage:
    # No account may exist yet: the address is all there is to go on.
    recipient = Recipient(
        user_id="", email=invitation.email, display_name="", language=invitation.language
    )
    with speaking(invitation.language):
        values = {
            "invitation": invitation,
            "lang": invitation.language,
            "role": role_text(invitation.role),
            "expires": when(invitation.expires_at),
        }
        return _message(
            _(
                "%(inviter)s invited you to %(workspace)s on LineUp Hub",
                inviter=invitation.inviter_name,
                workspace=invitation.workspace_name,
            ),
            sender,
            recipient,
            _ENV.get_template("email/invitation.txt").render(values),
            _ENV.get_template("email/invitation.html").render(values),
            f"invitation.{invitation.invitation_id}",
        )


def password_reset_message(
    mail: ResetMail, url: str, language: str, sender: str, *, ttl_minutes: int
) -> EmailMessage:
    recipient = Recipient(
        user_id=mail.user_id, email=mail.email, display_name=mail.display_name, language=language
    )
    with speaking(language):
        values = {"mail": mail, "url": url, "lang": language, "minutes": ttl_minutes}
        return _message(
            _("Reset your LineUp Hub password"),
            sender,
            recipient,
            _ENV.get_template("email/password_reset.txt").render(values),
            _ENV.get_template("email/password_reset.html").render(values),
            # Each link is its own mail: a second request must not read as a resend.
            f"password-reset.{hashlib.sha256(url.encode()).hexdigest()[:24]}",
        )


def _message(
    subject: str, sender: str, recipient: Recipient, plain: str, html: str, key: str
) -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = sender
    message["To"] = (
        formataddr((recipient.display_name, recipient.email))
        if recipient.display_name
        else recipient.email
    )
    domain = sender.rpartition("@")[2] or "lineup.local"
    # Fixed by what the mail is about, so a resend after a crash is the same message.
    message["Message-ID"] = f"<{key}@{domain}>"
    message["Auto-Submitted"] = "auto-generated"
    message.set_content(plain)
    message.add_alternative(html, subtype="html")
    return message
