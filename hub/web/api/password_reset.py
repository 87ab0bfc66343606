"""Forgot your password?, for API clients: ask for a reset link by mail, and set the new
password with the link's token (what ``/password/reset/{token}`` opens in a browser).

Asking answers ``202`` whatever the address, and in about the same time: the mail goes out
after the answer (a background task), so a known address does not answer slower than an
unknown one. Both are capped per client address as logins are (``reset_rate_limited``).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import Field
from quart import Blueprint, current_app
from quart_schema import document_response, security_scheme

from hub.channels.email import EmailChannel
from hub.channels.runtime import runtime_of
from hub.core.people.password_reset import RESET_TTL, ResetMail, reset_password, reset_request
from hub.host.client_address import client_address
from hub.host.settings import settings_of
from hub.web.api.answers import PasswordReset, ResetRequested
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_password_reset", __name__, url_prefix="/api/v1")
logger = logging.getLogger(__name__)


class ResetRequest(ApiModel):
    email: str = Field(min_length=1, max_length=320)


class ResetCompletion(ApiModel):
    token: str = Field(
        min_length=1,
        max_length=400,
        description="The last part of the mailed link, `/password/reset/{token}`.",
    )
    new_password: str = Field(min_length=1, max_length=1000)


@blueprint.post("/auth/password-reset")
@document_response(ResetRequested, 202)
@security_scheme([])
@json_body(ResetRequest, public=True)
async def request_reset(body: ResetRequest) -> tuple[dict[str, Any], int]:
    """Mail a reset link to the address if it has an account. The answer is the same
    either way (202), so it never tells whether an address has an account here."""
    mail = await reset_request(
        body.email, secret_key=settings_of(current_app).secret_key, client=client_address()
    )
    if mail is not None:
        current_app.add_background_task(mail_reset_link, mail)
    return {"linkValidForS": int(RESET_TTL.total_seconds())}, 202


@blueprint.post("/auth/password-reset/complete")
@document_response(PasswordReset)
@security_scheme([])
@json_body(ResetCompletion, public=True)
async def complete_reset(body: ResetCompletion) -> dict[str, Any]:
    """Set a new password with a reset link's token; the link then stops working, and every
    session of the account ends (sign in again with the new password). 410
    `reset_link_invalid` if the link expired, was used already or was never made here."""
    ended = await reset_password(
        body.token,
        body.new_password,
        secret_key=settings_of(current_app).secret_key,
        address=client_address(),
        via="api",
    )
    return {"sessionsEnded": ended}


async def mail_reset_link(mail: ResetMail) -> None:
    """Send the link through the email channel, after the asker was answered: a failure
    can only be logged (the pages' form mails it the same way)."""
    channel = runtime_of(current_app).channels.get("email")
    if not isinstance(channel, EmailChannel):
        logger.warning("password reset for %s not sent: the email channel is off", mail.user_id)
        return
    try:
        await channel.send_password_reset(mail)
    except Exception:  # the person was already answered; the log is all that is left
        logger.exception("password reset mail for %s failed", mail.user_id)
