"""The protocol's JSON Schema: every LAP/0.1 model in one document, for other languages.

The TypeScript SDK's wire types are generated from this document (``make protocol-types``),
so the hub, the Python SDK and the TypeScript SDK read one definition of every frame; a
test regenerates them and fails when the committed file is stale.

The document holds each model under ``$defs`` (as the hub reads it: defaults make a field
optional) and two maps from a frame's ``type`` to its payload, ``UplinkPayloads`` and
``DownlinkPayloads``. Run ``python -m hub.protocol.schema`` to print it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from hub.protocol.actions import ProposedAction
from hub.protocol.interactions import ApprovalPolicy, InputSpec, InteractionCard, Option
from hub.protocol.lap import (
    DOWNLINK_PAYLOADS,
    PROTOCOL_VERSION,
    UPLINK_PAYLOADS,
    Attachment,
    Envelope,
)

# Models a frame refers to by a field rather than by its type; named so they get a type too.
_PARTS: tuple[type[BaseModel], ...] = (
    Envelope,
    InteractionCard,
    Option,
    InputSpec,
    ApprovalPolicy,
    ProposedAction,
    Attachment,
)


def protocol_schema() -> dict[str, Any]:
    models = list(dict.fromkeys([*_PARTS, *UPLINK_PAYLOADS.values(), *DOWNLINK_PAYLOADS.values()]))
    refs, schema = models_json_schema(
        [(model, "validation") for model in models], ref_template="#/$defs/{model}"
    )

    def payload_map(title: str, payloads: dict[str, type[Any]]) -> dict[str, Any]:
        return {
            "title": title,
            "type": "object",
            "properties": {kind: refs[(model, "validation")] for kind, model in payloads.items()},
            "required": list(payloads),
        }

    defs: dict[str, Any] = schema["$defs"]
    defs["UplinkPayloads"] = payload_map("UplinkPayloads", UPLINK_PAYLOADS)
    defs["DownlinkPayloads"] = payload_map("DownlinkPayloads", DOWNLINK_PAYLOADS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"LAP/{PROTOCOL_VERSION}",
        "description": "Every frame of the LineUp agent protocol (docs/protocol.md).",
        "$defs": dict(sorted(defs.items())),
    }


def main() -> None:
    print(json.dumps(protocol_schema(), indent=2, sort_keys=True, ensure_ascii=False))


if __name__ == "__main__":
    main()
