"""The pages behind a batch mail's links (``/b/<token>``): several approvals of one task
answered together, all at once or item by item (``hub.channels.email.batches``; any surface
that records what it listed as a ``DeliveredBatch`` may link here, and its answers are
recorded ``via`` that surface).

As with a single card's link (``hub.channels.pages``), a GET only shows — the cards the mail
listed, each with its outcome once decided, and a form — and the form's POST decides, once.
It decides exactly the cards the mail listed and still open, through ``respond_to_batch``:
each item is checked and recorded as if answered alone, bound to the action its own mail
showed, and a card someone answered first is reported by name while the rest apply.
Approving a high-risk card takes a ticked confirmation, as everywhere else. A link that
cannot be used gets the same pages as a card link: cut short or changed, expired, used
already, sent to someone else, or a viewer's.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from quart import Blueprint, Quart, request
from tortoise.exceptions import IntegrityError

from hub.channels.base import Recipient
from hub.channels.cards import Card
from hub.channels.delivered_batches import listed_cards, shown_action_hashes
from hub.channels.links import BatchLink, LinkError, address_digest
from hub.channels.pages import LinkAnswering, Refused, answering, problem, try_again_or_raise
from hub.channels.wording import already_decided_text, outcome_text, risk_text
from hub.core.approvals.permissions import may_answer
from hub.core.errors import HubError
from hub.core.store.models import Interaction, Membership, User
from hub.core.store.notification_models import DeliveredBatch, UsedLink
from hub.core.work.batch_answers import APPROVE, REJECT, BatchItem, Outcome, answer_for
from hub.host.templates import render_template
from hub.i18n import gettext as _
from hub.i18n import speaking
from hub.protocol.interactions import InteractionCard

blueprint = Blueprint("batch_links", __name__, template_folder="templates")


async def _open(token: str) -> tuple[BatchLink, Recipient, DeliveredBatch, list[Card]]:
    runtime: LinkAnswering = answering()
    try:
        link = runtime.signer.read_batch(token)
    except LinkError as error:
        raise Refused(error.reason) from None
    user = await User.filter(id=link.user_id).first()
    if user is None:
        raise Refused("link_not_yours")
    row = await DeliveredBatch.filter(id=link.batch_id, user_id=user.id).first()
    recipient = await runtime.recipient(user, row.surface if row else "email")
    if row is None:
        raise Refused("link_invalid", recipient.language)
    member = await Membership.filter(user_id=user.id, workspace_id=row.workspace_id).exists()
    if address_digest(user.email) != link.address_digest or not member:
        raise Refused("link_not_yours", recipient.language)
    return link, recipient, row, await listed_cards(row)


def _values(link: BatchLink, cards: list[Card], **extra: Any) -> dict[str, Any]:
    pending = [card for card in cards if card.is_pending]
    approving = link.action in (APPROVE, "pick")
    return {
        "action": link.action,
        "items": [
            {"card": c, "risk": risk_text(c), "outcome": outcome_text(c), "pending": c.is_pending}
            for c in cards
        ],
        "pending": pending,
        "confirm_high_risk": approving and any(card.is_high_risk for card in pending),
        **extra,
    }


async def _page(
    recipient: Recipient, link: BatchLink, cards: list[Card], status: int = 200, **extra: Any
) -> tuple[str, int]:
    body = await render_template(
        "channels/link_batch.html",
        lang=recipient.language,
        **_values(link, cards, **extra),
    )
    return body, status


@blueprint.route("/b/<token>", methods=["GET"])
async def show(token: str) -> tuple[str, int]:
    """The listed cards and the form; never changes anything (HEAD comes here too)."""
    try:
        return await _show(token)
    except Exception as error:
        return await try_again_or_raise(error)


async def _show(token: str) -> tuple[str, int]:
    try:
        link, recipient, row, cards = await _open(token)
    except Refused as refused:
        return await problem(refused)
    with speaking(recipient.language):
        if await UsedLink.filter(nonce=link.nonce).exists():
            return await _page(recipient, link, cards, 410, used=True)
        if not await may_answer(row.workspace_id, recipient.user_id):
            return await problem(Refused("not_allowed_to_answer", recipient.language))
        return await _page(recipient, link, cards, form=True)


@blueprint.route("/b/<token>", methods=["POST"])
async def decide(token: str) -> tuple[str, int]:
    try:
        link, recipient, row, cards = await _open(token)
    except Refused as refused:
        return await problem(refused)
    except Exception as error:
        return await try_again_or_raise(error)
    with speaking(recipient.language):
        try:
            return await _decide(link, recipient, row, cards)
        except Exception as error:
            return await try_again_or_raise(error, recipient.language)


async def _decide(
    link: BatchLink, recipient: Recipient, row: DeliveredBatch, cards: list[Card]
) -> tuple[str, int]:
    if await UsedLink.filter(nonce=link.nonce).exists():
        return await _page(recipient, link, cards, 410, used=True)
    if not await may_answer(row.workspace_id, recipient.user_id):
        return await problem(Refused("not_allowed_to_answer", recipient.language))
    pending = [card for card in cards if card.is_pending]
    if not pending:
        return await _page(recipient, link, cards, 409)
    form = await request.form
    picks = _picks(link, pending, form)
    if not picks:
        error = _("Pick an answer for at least one card.")
        return await _page(recipient, link, cards, 422, form=True, error=error)
    risky = [card for card in pending if card.is_high_risk and picks.get(card.id) == APPROVE]
    if risky and form.get("confirm") != "yes":
        error = _("Approving a high-risk card needs the confirmation ticked.")
        return await _page(recipient, link, cards, 422, form=True, error=error)
    items = await _items(row, pending, picks)
    try:
        result = await answering().respond_to_batch(
            row.workspace_id,
            row.task_id,
            items,
            recipient,
            via=row.surface,  # the surface that sent the batch message: email's mail
            idempotency_key=link.nonce,
        )
    except HubError as error:  # refused whole (a card changed under the mail): nothing decided
        return await _page(recipient, link, cards, error.status, form=True, error=error.message)
    await _spend(link, recipient, row)
    fresh = await listed_cards(row)
    return await _page(recipient, link, fresh, recorded=_recorded(result, fresh))


def _picks(link: BatchLink, pending: list[Card], form: Any) -> dict[str, str]:
    """The option each card gets: the link's own for "all", else each item's choice."""
    if link.action in (APPROVE, REJECT):
        return {card.id: link.action for card in pending}
    picks = {card.id: str(form.get(f"choice-{card.id}") or "") for card in pending}
    return {card_id: pick for card_id, pick in picks.items() if pick in (APPROVE, REJECT)}


async def _items(
    row: DeliveredBatch, pending: list[Card], picks: dict[str, str]
) -> list[BatchItem]:
    """Each pick as its card's answer, in the order the mail listed them, bound to the
    action the card's own mail showed."""
    interactions = {i.id: i for i in await Interaction.filter(id__in=[card.id for card in pending])}
    shown = await shown_action_hashes(row)
    return [
        BatchItem(
            card_id,
            answer_for(
                InteractionCard.model_validate(interactions[card_id].payload),
                picks[card_id],
                shown.get(card_id),
            ),
        )
        for card_id in row.interaction_ids
        if card_id in picks and card_id in interactions
    ]


def _recorded(result: dict[str, Any], cards: list[Card]) -> list[str]:
    """What the batch did: how many it recorded, then each item answered elsewhere first."""
    outcomes = result["items"]
    decided = sum(1 for item in outcomes if item["outcome"] == Outcome.DECIDED)
    lines = [_("Recorded %(count)s answers.", count=decided)]
    by_id = {card.id: card for card in cards}
    for item in outcomes:
        card = by_id.get(item["interactionId"])
        if item["outcome"] == Outcome.ALREADY_DECIDED and card is not None:
            lines.append(f"“{card.title}”: {already_decided_text(card)}")
        elif item["outcome"] != Outcome.DECIDED:
            lines.append(f"“{card.title if card else item['interactionId']}”: {item['message']}")
    return lines


async def _spend(link: BatchLink, recipient: Recipient, row: DeliveredBatch) -> None:
    """Mark the link used once its answers are stored (they are what spend it: a second
    press is the same batch, by the link's nonce, and decides nothing twice)."""
    with contextlib.suppress(IntegrityError):
        await UsedLink.create(
            nonce=link.nonce,
            user_id=recipient.user_id,
            interaction_id=row.id,
            used_at=datetime.now(UTC),
        )


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)
