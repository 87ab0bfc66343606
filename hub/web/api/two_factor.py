"""Two-factor sign-in for API clients: whether it is on, setting it up, turning it off.

Setting up is two calls, as on the Settings page: ``setup`` draws a secret and its
``otpauth://`` URI (for the authenticator app) and keeps nothing; ``confirm`` sends that
secret back with a first code from the app, and only then does the account hold it
(sealed) and get its ten recovery codes, answered that once. A secret never confirmed is
simply forgotten, so a mistyped one locks nobody out.

Turning it off needs the password or a code (or a recovery code): a borrowed session or
token alone must not remove the second factor. Signing in with it on is ``POST
/auth/login`` with ``totpCode``.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from quart import Blueprint, current_app
from quart_schema import document_response

from hub.core.people import two_factor
from hub.core.store.models import User
from hub.host.client_address import client_address
from hub.host.identity import current_caller
from hub.host.settings import settings_of
from hub.web.api.answers import RecoveryCodes, TwoFactorSetup, TwoFactorStatus
from hub.web.api.base import ApiModel, json_body

blueprint = Blueprint("api_two_factor", __name__, url_prefix="/api/v1")


class Confirmation(ApiModel):
    secret: str = Field(
        min_length=1, max_length=100, description="The secret `setup` answered, unchanged."
    )
    code: str = Field(min_length=1, max_length=20, description="The app's code for it now.")


class TurningOff(ApiModel):
    password: str | None = Field(None, max_length=1000)
    code: str | None = Field(
        None, max_length=100, description="The authenticator's code, or a recovery code."
    )


@blueprint.get("/me/two-factor")
@document_response(TwoFactorStatus)
async def status() -> dict[str, Any]:
    """Whether two-factor sign-in is on for you, and how many recovery codes are left."""
    user = (await current_caller()).user
    return await _status_of(user)


@blueprint.post("/me/two-factor/setup")
@document_response(TwoFactorSetup)
async def setup() -> dict[str, Any]:
    """A new secret for your authenticator app, as text and as the `otpauth://` URI a QR
    code holds. Nothing changes until `confirm`. 409 `totp_already_on` if it is on."""
    user = (await current_caller()).user
    if two_factor.is_on(user):
        raise two_factor.already_on()
    secret = two_factor.new_secret()
    return {"secret": secret, "otpauthUri": two_factor.provisioning_uri(secret, user.email)}


@blueprint.post("/me/two-factor/confirm")
@document_response(RecoveryCodes, 201)
@json_body(Confirmation)
async def confirm(body: Confirmation) -> tuple[dict[str, Any], int]:
    """Turn two-factor sign-in on with the secret `setup` gave and a first code from it
    (401 `bad_totp_code` if the code is wrong). The recovery codes are answered this once:
    each signs in once instead of a code."""
    user = (await current_caller()).user
    codes = await two_factor.confirm(
        user,
        body.secret,
        body.code,
        secret_key=settings_of(current_app).secret_key,
        address=client_address(),
        via="api",
    )
    return {"recoveryCodes": codes}, 201


@blueprint.post("/me/two-factor/disable")
@document_response(TwoFactorStatus)
@json_body(TurningOff)
async def disable(body: TurningOff) -> dict[str, Any]:
    """Turn two-factor sign-in off, giving your password (403 `wrong_password`) or a code
    or recovery code (401 `bad_totp_code`); its recovery codes are deleted."""
    user = (await current_caller()).user
    await two_factor.turn_off(
        user,
        code=body.code,
        password=body.password,
        secret_key=settings_of(current_app).secret_key,
        address=client_address(),
        via="api",
    )
    return await _status_of(user)


async def _status_of(user: User) -> dict[str, Any]:
    on = two_factor.is_on(user)
    return {
        "enabled": on,
        "recoveryCodesLeft": await two_factor.recovery_codes_left(user) if on else 0,
    }
