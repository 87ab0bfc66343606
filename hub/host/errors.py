"""Turning ``HubError`` into the JSON error body of the public contract.

Every error answer is ``{"error": {"code", "message", "hint"}}`` with the error's status;
an unexpected exception becomes a 500 of the same shape with a code a person can report,
never a stack trace.
"""

from __future__ import annotations

import logging

from quart import Quart, Response, jsonify
from werkzeug.exceptions import HTTPException

from hub.core.errors import HubError
from hub.core.store.storage_faults import refused_value, storage_fault

logger = logging.getLogger(__name__)


def error_response(error: HubError) -> Response:
    response = jsonify({"error": error.to_dict()})
    response.status_code = error.status
    return response


def http_error_response(error: HTTPException) -> Response:
    """A routing refusal (no such path, method not allowed) in the contract's JSON."""
    response = jsonify(
        {
            "error": {
                "code": (error.name or "http_error").lower().replace(" ", "_"),
                "message": error.description or error.name,
                "hint": "Check the method and the path against /api/docs.",
            }
        }
    )
    response.status_code = error.code or 500
    return response


def init_app(app: Quart) -> None:
    @app.errorhandler(HubError)
    async def _hub_error(error: HubError) -> Response:
        return error_response(error)

    @app.errorhandler(HTTPException)
    async def _http_error(error: HTTPException) -> Response:
        return http_error_response(error)

    @app.errorhandler(Exception)
    async def _unexpected(error: Exception) -> Response:
        refused = refused_value(error)
        if refused is not None:
            return error_response(refused)
        fault = storage_fault(error)
        if fault is not None:
            # Not a bug: say what is wrong with the storage, without a stack trace per request.
            logger.warning("database failure: %s: %s", type(error).__name__, error)
            return error_response(fault)
        logger.exception("unhandled error")
        return error_response(HubError("Something went wrong on the hub."))
