"""What every JSON API module shares: request models, body and query validation, and the
idempotency key.

Validation failures come back in the contract's error shape, never quart-schema's default
body: a body that is not JSON is ``400 invalid_json``; fields that do not fit the schema
are ``422 invalid_input`` with ``details.fields`` naming each problem by its JSON name.
The models double as the OpenAPI description (``document_request`` /
``document_querystring``), so the docs cannot drift from what is checked.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from quart import current_app, request
from quart_schema import document_querystring, document_request

from hub.core.errors import InvalidInput
from hub.core.log.idempotency import MAX_KEY_LENGTH
from hub.core.text import refuse_nul
from hub.host.identity import current_caller, member_of

IDEMPOTENCY_HEADER = "Idempotency-Key"
_QUERY_MODEL = "_lineup_query_model"
API_PREFIX = "/api/v1/"
MAX_BODY_BYTES = 1_000_000

Model = TypeVar("Model", bound=BaseModel)
View = Callable[..., Awaitable[Any]]


class ApiModel(BaseModel):
    """camelCase on the wire, like the rest of the contract; unknown fields are ignored so
    that an older hub accepts a newer client's requests."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class MalformedBody(InvalidInput):
    status = 400
    code = "invalid_json"
    hint = "Send a JSON object with Content-Type: application/json."


def _fields(error: ValidationError) -> list[dict[str, str]]:
    return [
        {
            "field": ".".join(str(part) for part in problem["loc"]) or "(body)",
            "problem": problem["msg"],
        }
        for problem in error.errors(include_url=False)
    ]


def invalid(error: ValidationError, what: str) -> InvalidInput:
    fields = _fields(error)
    summary = "; ".join(f"{f['field']}: {f['problem']}" for f in fields[:5])
    return InvalidInput(f"The {what} is not valid — {summary}.", fields=fields)


def validated(model: type[Model], data: Any, what: str = "request body") -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise invalid(error, what) from None


async def _caller_first(kwargs: dict[str, Any]) -> None:
    """Who is asking is settled before what they sent is read: a stranger learns nothing from
    validation errors, and is refused the same way whatever the body."""
    if "ws" in kwargs:
        await member_of(kwargs["ws"])
    else:
        await current_caller()


def json_body(
    model: type[BaseModel], *, optional: bool = False, public: bool = False
) -> Callable[[View], View]:
    """Validate the JSON body as ``model`` and pass it as ``body=``.

    ``optional``: an empty body reads as ``{}`` (e.g. a cancel with no reason). ``public``:
    the route needs no caller (sign-up, login).
    """

    def decorate(view: View) -> View:
        @wraps(view)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not public:
                await _caller_first(kwargs)
            raw = await request.get_data(as_text=False)
            if len(raw) > MAX_BODY_BYTES:
                raise InvalidInput(
                    f"The body is larger than {MAX_BODY_BYTES} bytes.", code="body_too_large"
                )
            if not raw.strip() and optional:
                data: Any = {}
            else:
                if not request.is_json:
                    raise MalformedBody("The body must be JSON (Content-Type: application/json).")
                try:
                    data = json.loads(raw)
                except ValueError as error:
                    raise MalformedBody(f"The body is not valid JSON: {error}.") from None
                if data is None and optional:
                    data = {}
                if not isinstance(data, dict):
                    raise MalformedBody("The body must be a JSON object.")
                refuse_nul(data, "request body")
            return await view(*args, body=validated(model, data), **kwargs)

        return document_request(model)(wrapper)

    return decorate


class UnknownParameter(InvalidInput):
    status = 400
    code = "unknown_parameter"
    hint = "Send only the parameters this operation lists (see details.accepted)."


class PageQuery(ApiModel):
    """The paging every list takes: up to ``limit`` items after ``cursor``."""

    cursor: str | None = Field(
        None,
        max_length=1000,
        description="The ``nextCursor`` of the previous page, unchanged; leave it out for the "
        "first page.",
    )


def refuse_unknown(model: type[BaseModel], given: list[str]) -> None:
    """A parameter the operation does not know is refused, not ignored: ``offset`` or
    ``page`` read as paging a client believes it has, and silently ignoring it would hand
    that client the same first page over and over."""
    accepted = [field.alias or name for name, field in model.model_fields.items()]
    known = {*accepted, *model.model_fields}
    unknown = [key for key in given if key not in known]
    if unknown:
        raise UnknownParameter(
            f"Unknown query parameter {unknown[0]!r}: this operation takes "
            f"{', '.join(accepted) or 'none'}.",
            parameter=unknown[0],
            accepted=accepted,
        )


def query_args(model: type[BaseModel]) -> Callable[[View], View]:
    """Validate the query string as ``model`` and pass it as ``query=``; a parameter the
    model does not name is ``400 unknown_parameter``."""

    def decorate(view: View) -> View:
        @wraps(view)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            await _caller_first(kwargs)
            refuse_unknown(model, list(request.args))
            data = {key: request.args.get(key) for key in request.args}
            return await view(*args, query=validated(model, data, "query string"), **kwargs)

        setattr(wrapper, _QUERY_MODEL, model)
        return document_querystring(model)(wrapper)

    return decorate


class _NoParameters(BaseModel):
    pass


async def refuse_stray_parameters() -> None:
    """Run before every API view: a read that takes no query string refuses one too, so that
    ``?page=2`` on a list that does not page says so rather than answering page one."""
    if request.method != "GET" or not request.args or request.endpoint is None:
        return
    if not request.path.startswith(API_PREFIX):
        return  # the pages keep their own rule (hub.web.pages.paging)
    view = current_app.view_functions.get(request.endpoint)
    if view is None or hasattr(view, _QUERY_MODEL):
        return  # query_args checks its own, after the caller
    await _caller_first(dict(request.view_args or {}))
    refuse_unknown(_NoParameters, list(request.args))


def idempotency_key() -> str | None:
    """The client's key for a write it may repeat; the first result is returned on repeat."""
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    key = key.strip()
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise InvalidInput(
            f"{IDEMPOTENCY_HEADER} must be 1 to {MAX_KEY_LENGTH} characters.",
            code="invalid_idempotency_key",
        )
    return key
