"""The one pydantic base for everything that crosses the wire.

camelCase on the wire (as the LAP envelope of spec §10 uses), snake_case in Python; both
spellings are accepted on input. Unknown fields are kept (``extra="allow"``) so that a newer
adapter talking to an older hub loses nothing; the gateway logs them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        str_strip_whitespace=False,
    )

    def wire(self) -> dict[str, object]:
        """The JSON-ready dict, camelCase, without unset optional fields."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    @property
    def unknown_fields(self) -> list[str]:
        return sorted(self.model_extra or {})
