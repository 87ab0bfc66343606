"""The OpenAPI document: quart-schema's, plus the error answer every operation can give.

quart-schema describes requests from the validation models, and answers from the models an
operation names with ``document_response`` (``hub.web.api.answers``). An operation that names
none is still promised to answer a JSON object (or nothing at all, if marked
``no_content``), and every operation gets the contract's error shape
(``{"error": {"code", "message", "hint", "details?"}}``) as its default answer.

Only the JSON API (``/api/v1/…``) is described: the pages, email links and health checks
answer HTML or plain text for browsers and probes, and a client generated from the document
must not mistake them for JSON operations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from quart_schema import OpenAPIProvider
from werkzeug.routing import Rule

API_PREFIX = "/api/v1/"
_NO_CONTENT = "_lineup_no_content"

View = TypeVar("View", bound=Callable[..., Any])


def no_content(view: View) -> View:
    """Mark an operation that answers ``204 No Content`` on success."""
    setattr(view, _NO_CONTENT, True)
    return view


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "hint"],
            "properties": {
                "code": {"type": "string", "description": "Stable; programs switch on it."},
                "message": {"type": "string"},
                "hint": {"type": "string", "description": "What to do next."},
                "details": {"type": "object", "additionalProperties": True},
            },
        }
    },
}


class HubOpenAPIProvider(OpenAPIProvider):
    def schema(self) -> dict[str, Any]:
        document = super().schema()
        document["components"]["schemas"]["Error"] = ERROR_SCHEMA
        return document

    def generate_rules(self) -> Iterable[Rule]:
        return (rule for rule in super().generate_rules() if rule.rule.startswith(API_PREFIX))

    def build_paths(self, rule: Rule) -> tuple[dict[str, Any], dict[str, Any]]:
        paths, components = super().build_paths(rule)
        view = self._app.view_functions[rule.endpoint]
        for operations in paths.values():
            for operation in operations.values():
                # quart-schema keys documented answers by int; OpenAPI keys are strings.
                responses = {str(k): v for k, v in (operation.get("responses") or {}).items()}
                if getattr(view, _NO_CONTENT, False):
                    responses["204"] = {"description": "Done; no body."}
                elif not any(str(status).startswith("2") for status in responses):
                    responses["2XX"] = {
                        "description": "Success: a JSON object.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                responses.setdefault(
                    "default",
                    {
                        "description": "An error in the contract's shape.",
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                        },
                    },
                )
                operation["responses"] = responses
        return paths, components
