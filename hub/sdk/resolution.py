"""A person's answer to an interaction card, as the adapter receives it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hub.protocol.lap import InteractionResolved


@dataclass(frozen=True, slots=True)
class Resolution:
    interaction_id: str
    response: dict[str, Any]
    responded_by: str
    responded_at: datetime
    via: str

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Resolution:
        resolved = InteractionResolved.model_validate(payload)
        return cls(
            interaction_id=resolved.interaction_id,
            response=dict(resolved.response),
            responded_by=resolved.responded_by,
            responded_at=resolved.responded_at,
            via=resolved.via,
        )

    @property
    def option_id(self) -> str | None:
        value = self.response.get("optionId")
        return value if isinstance(value, str) else None

    @property
    def option_ids(self) -> list[str]:
        values = self.response.get("optionIds")
        if isinstance(values, list):
            return [str(v) for v in values]
        return [self.option_id] if self.option_id else []

    @property
    def approved(self) -> bool:
        """True only for the ``approve`` option of an approval or review card."""
        return self.option_id == "approve"

    @property
    def votes(self) -> list[dict[str, Any]]:
        """A quorum's votes (actor, optionId, via, at), oldest first; [] for one answer."""
        values = self.response.get("votes")
        return [dict(v) for v in values if isinstance(v, dict)] if isinstance(values, list) else []

    @property
    def comment(self) -> str | None:
        value = self.response.get("comment")
        return value if isinstance(value, str) else None

    @property
    def text(self) -> str | None:
        value = self.response.get("text")
        return value if isinstance(value, str) else None
