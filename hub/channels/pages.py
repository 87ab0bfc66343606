"""The pages behind signed card links (``/a/<token>``): email's option links and every
surface's "open the card on the web".

GET and HEAD only ever *show*: the card's context and a form (mail scanners and link
previews fetch links, so fetching must not decide anything). The form's POST decides, once,
through ``ChannelRuntime.respond``. Every way a link can be unusable — cut short or changed,
expired, used already, sent to someone else — gets a page that says which, in the
recipient's language, and the card's outcome when there is one. A database that fails
meanwhile gets a "try again" page with the fault's code, and the link stays usable: it is
spent by the decision it carries, never before (``_spend``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Protocol

from quart import Blueprint, Quart, current_app, request
from tortoise.exceptions import IntegrityError

from hub.channels.action_view import FIELD_PREFIX, edits_from_form
from hub.channels.base import Recipient
from hub.channels.cards import Card, load_card
from hub.channels.links import CardLink, LinkError, LinkSigner, address_digest
from hub.channels.wording import (
    agent_text,
    already_decided_text,
    not_allowed_to_answer_text,
    outcome_text,
    policy_lines,
    risk_text,
    voted_text,
    when,
)
from hub.core.approvals.permissions import NotAllowedToAnswer, may_answer
from hub.core.errors import AlreadyDecided, Conflict, Forbidden, Gone, InvalidInput, NotFound
from hub.core.store.models import Membership, User
from hub.core.store.notification_models import UsedLink
from hub.core.store.storage_faults import storage_fault
from hub.core.work.batch_answers import BatchItem
from hub.host.templates import render_template
from hub.i18n import gettext as _
from hub.i18n import language_in_effect, language_tag, speaking
from hub.protocol.interactions import declines

logger = logging.getLogger(__name__)

blueprint = Blueprint("card_links", __name__, template_folder="templates")

_STATUS = {
    "link_invalid": 400,
    "link_expired": 410,
    "link_used": 410,
    "link_not_yours": 403,
    "not_allowed_to_answer": 403,
}


# app.extensions[_ANSWERING]: what answers through these pages (``init_app``).
_ANSWERING = "lineup.channels.card_links"


class LinkAnswering(Protocol):
    """What the link pages need of the channel runtime, which attaches them: reading a
    signed link, reaching its person, and the one decision path."""

    signer: LinkSigner

    async def recipient(self, user: User, surface: str) -> Recipient: ...

    async def respond(
        self,
        card: Card,
        recipient: Recipient,
        response: dict[str, Any],
        *,
        via: str,
        idempotency_key: str | None = None,
    ) -> Card: ...

    async def respond_to_batch(
        self,
        workspace_id: str,
        task_id: str,
        items: list[BatchItem],
        recipient: Recipient,
        *,
        via: str,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]: ...


def answering() -> LinkAnswering:
    answering: LinkAnswering = current_app.extensions[_ANSWERING]
    return answering


class Refused(Exception):
    """A link that cannot be used. ``language`` is the recipient's once the link names one;
    before that (a link cut short) the page speaks the browser's language."""

    def __init__(self, reason: str, language: str | None = None, card: Card | None = None) -> None:
        super().__init__(reason)
        self.reason, self.language, self.card = reason, language, card


def _reason_text(reason: str) -> str:
    reasons = {
        "link_invalid": _(
            "This link is not valid: it may have been cut short or changed. "
            "Open the card from the hub instead."
        ),
        "link_expired": _("This link has expired. Open the card from the hub instead."),
        "link_used": _("This link was used already."),
        "link_not_yours": _("This link was sent to someone else, so it cannot answer for you."),
        "not_allowed_to_answer": not_allowed_to_answer_text(),
    }
    return reasons[reason]


async def _open(token: str) -> tuple[CardLink, Recipient, Card]:
    runtime = answering()
    try:
        link = runtime.signer.read(token)
    except LinkError as error:
        raise Refused(error.reason) from None
    user = await User.filter(id=link.user_id).first()
    if user is None:
        raise Refused("link_not_yours")
    recipient = await runtime.recipient(user, link.via)
    language = recipient.language
    member = await Membership.filter(user_id=user.id, workspace_id=link.workspace_id).exists()
    if address_digest(user.email) != link.address_digest or not member:
        raise Refused("link_not_yours", language)
    card = await load_card(link.workspace_id, link.interaction_id)
    if card is None:
        raise Refused("link_invalid", language)
    return link, recipient, card


def _context(card: Card, language: str, **extra: Any) -> dict[str, Any]:
    return {
        "card": card,
        "lang": language,
        "risk": risk_text(card),
        "agent": agent_text(card),
        "outcome": outcome_text(card),
        "expires": when(card.expires_at) if card.expires_at else None,
        "policy": policy_lines(card),
        **extra,
    }


async def problem(refused: Refused) -> tuple[str, int]:
    language = refused.language or language_tag(language_in_effect())
    with speaking(language):
        body = await render_template(
            "channels/link_problem.html",
            lang=language,
            title=_("This link cannot be used"),
            message=_reason_text(refused.reason),
            outcome=outcome_text(refused.card) if refused.card else None,
        )
    return body, _STATUS.get(refused.reason, 400)


@blueprint.route("/a/<token>", methods=["GET"])
async def show(token: str) -> tuple[str, int]:
    """Show the card and a confirmation form; never changes anything (HEAD comes here too)."""
    try:
        return await _show(token)
    except Exception as error:
        return await try_again_or_raise(error)


async def _show(token: str) -> tuple[str, int]:
    try:
        link, recipient, card = await _open(token)
    except Refused as refused:
        return await problem(refused)
    language = recipient.language
    if await UsedLink.filter(nonce=link.nonce).exists():
        return await problem(Refused("link_used", language, card))
    with speaking(language):
        if not card.is_pending:
            page = await render_template("channels/link_card.html", **_context(card, language))
            return page, 200
        if not await may_answer(link.workspace_id, recipient.user_id):
            return await problem(Refused("not_allowed_to_answer", language, card))
        voted = voted_text(card, recipient.user_id)
        if voted:  # a quorum voter is told their vote stands, not asked again
            values = _context(card, language, outcome=voted)
            return await render_template("channels/link_card.html", **values), 200
        return await _form(card, language, link), 200


async def _form(
    card: Card, language: str, link: CardLink, error: str | None = None, form: Any = None
) -> str:
    chosen = card.option(link.option_id) if link.option_id else None
    sent = {k: v for k, v in (form or {}).items() if k.startswith(FIELD_PREFIX)}
    return await render_template(
        "channels/link_card.html",
        **_context(card, language, chosen=chosen, error=error, form=True, edits=sent),
    )


@blueprint.route("/a/<token>", methods=["POST"])
async def decide(token: str) -> tuple[str, int]:
    try:
        link, recipient, card = await _open(token)
    except Refused as refused:
        return await problem(refused)
    except Exception as error:
        return await try_again_or_raise(error)
    with speaking(recipient.language):
        try:
            return await _decide(link, recipient, card)
        except Exception as error:
            return await try_again_or_raise(error, recipient.language)


async def _decide(link: CardLink, recipient: Recipient, card: Card) -> tuple[str, int]:
    language = recipient.language
    if await UsedLink.filter(nonce=link.nonce).exists():
        return await problem(Refused("link_used", language, card))
    if not card.is_pending:
        return await _already(card, language)
    if not await may_answer(link.workspace_id, recipient.user_id):
        return await problem(Refused("not_allowed_to_answer", language, card))
    form = await request.form
    response = _response(card, link, form)
    runtime = answering()
    try:
        card = await runtime.respond(
            card, recipient, response, via=link.via, idempotency_key=link.nonce
        )
    except InvalidInput as error:  # nothing was decided: the link stays usable
        return await _form(card, language, link, error=error.message, form=form), 422
    except AlreadyDecided:
        fresh = await load_card(card.workspace_id, card.id)
        return await _already(fresh or card, language)
    except NotAllowedToAnswer:  # made a viewer between the check above and the answer
        return await problem(Refused("not_allowed_to_answer", language, card))
    except Conflict as error:
        if error.code == "action_changed":  # the message showed another action
            return await _form(card, language, link, error=error.message), 409
        values = _context(card, language, already=error.message)  # voted already
        return await render_template("channels/link_card.html", **values), error.status
    except Forbidden as refused:  # not a named approver
        values = _context(card, language, already=refused.message)
        return await render_template("channels/link_card.html", **values), refused.status
    except (Gone, NotFound):
        fresh = await load_card(card.workspace_id, card.id)
        values = _context(fresh or card, language)
        return await render_template("channels/link_card.html", **values), 410
    await _spend(link, recipient, card)
    # A vote on a quorum card leaves it open: say how far the votes are.
    voted = voted_text(card, recipient.user_id)
    extra = {"outcome": voted} if voted else {}
    body = await render_template(
        "channels/link_card.html",
        **_context(card, language, thanks=True, **extra),
    )
    return body, 200


async def _spend(link: CardLink, recipient: Recipient, card: Card) -> None:
    """Mark the link used, now that its decision is stored.

    The decision itself is what spends the link: its event's envelope id is derived from
    the link's nonce, so it is stored in the decision's own transaction, and a second
    press finds the card decided (or the vote cast) whatever happens after. This row only
    lets the pages say "used already"; writing it before the decision would leave a link
    spent with nothing decided whenever the decision fails, a database fault included."""
    try:
        await UsedLink.create(
            nonce=link.nonce,
            user_id=recipient.user_id,
            interaction_id=card.id,
            used_at=datetime.now(UTC),
        )
    except IntegrityError:  # a second press that met the first one's stored decision
        pass
    except Exception as error:
        if storage_fault(error) is None:
            raise
        # The decision stands; the card's state already refuses the link a second time.
        logger.warning("could not mark link used: %s: %s", type(error).__name__, error)


async def try_again_or_raise(error: Exception, language: str | None = None) -> tuple[str, int]:
    """A page that says the database failed, nothing was decided and the same link will
    work once it is back; anything that is not a storage fault goes on to the app's handler."""
    fault = storage_fault(error)
    if fault is None:
        raise error
    logger.warning("database failure on a card link: %s: %s", type(error).__name__, error)
    language = language or language_tag(language_in_effect())
    with speaking(language):
        body = await render_template(
            "channels/link_problem.html",
            lang=language,
            title=_("Nothing was decided yet"),
            message=_(
                "The hub could not store your answer just now, so nothing was decided and "
                "this link is still yours to use. Try again in a minute."
            ),
            code=fault.code,
        )
    return body, fault.status


async def _already(card: Card, language: str) -> tuple[str, int]:
    message = already_decided_text(card) if card.status == "resolved" else None
    body = await render_template(
        "channels/link_card.html", **_context(card, language, already=message)
    )
    return body, 409


def _response(card: Card, link: CardLink, form: Any) -> dict[str, Any]:
    comment = (form.get("comment") or "").strip()
    if card.takes_text:
        return {"text": form.get("text") or ""}
    if card.multiple:
        return {"optionIds": form.getlist("optionIds")}
    answer: dict[str, Any] = {"optionId": link.option_id or form.get("optionId") or ""}
    if comment:
        answer["comment"] = comment
    if card.proposed_action is not None:
        # Bound to what the message showed when the link carries it, else to this page.
        answer["actionHash"] = link.action_hash or form.get("actionHash") or ""
        option = card.option(answer["optionId"])
        edits = edits_from_form(card.proposed_action, form)
        if edits and option is not None and not declines(option.id, option.style):
            answer["action"] = edits
    return answer


def init_app(app: Quart, answering: LinkAnswering) -> None:
    app.extensions[_ANSWERING] = answering
    app.register_blueprint(blueprint)
