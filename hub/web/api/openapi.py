"""The OpenAPI document: quart-schema's, plus the error answer every operation can give.

quart-schema describes requests from the validation models; answers are the view functions'
JSON, so each operation gets a generic success entry and the contract's error shape
(``{"error": {"code", "message", "hint", "details?"}}``) as its default answer — without a
``responses`` entry the document would not be valid OpenAPI.
"""

from __future__ import annotations

from typing import Any

from quart_schema import OpenAPIProvider
from werkzeug.routing import Rule

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

    def build_paths(self, rule: Rule) -> tuple[dict[str, Any], dict[str, Any]]:
        paths, components = super().build_paths(rule)
        for operations in paths.values():
            for operation in operations.values():
                responses = dict(operation.get("responses") or {})
                if not any(str(status).startswith("2") for status in responses):
                    responses["2XX"] = {"description": "Success: JSON described above."}
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
