"""A person's answer to an interaction card, as the adapter receives it.

When the card proposed an action, the answer is bound to it: ``approved_action`` gives the
fields to act on — the proposed ones, or the person's edit of them — and refuses an answer
that approved any other action.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hub.protocol.actions import ActionEditError, ProposedAction, action_hash
from hub.protocol.clock import wire_time
from hub.protocol.lap import InteractionExpired, InteractionResolved, InteractionWithdrawn
from hub.sdk.errors import ActionMismatch, NotApproved


@dataclass(frozen=True, slots=True)
class Resolution:
    interaction_id: str
    response: dict[str, Any]
    responded_by: str
    responded_at: datetime
    via: str
    # The card's time ran out with nothing decided: no option was chosen, nothing approved.
    expired: bool = False
    # The agent itself took the card back (``withdraw_interaction``): nobody answered it in
    # the hub. ``withdrawal_reason`` says why ("answered_in_terminal", "no_longer_needed").
    withdrawn: bool = False
    withdrawal_reason: str = ""

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Resolution:
        """From an ``interaction.resolved`` or an ``interaction.expired`` downlink, or the
        record of a withdrawal this agent made (``withdrawal_payload``)."""
        if "withdrawnAt" in payload:
            withdrawn = InteractionWithdrawn.model_validate(payload)
            return cls(
                interaction_id=withdrawn.interaction_id,
                response={},
                responded_by="",
                responded_at=datetime.fromisoformat(str(payload["withdrawnAt"])),
                via="",
                withdrawn=True,
                withdrawal_reason=withdrawn.reason,
            )
        if "expiredAt" in payload:
            expired = InteractionExpired.model_validate(payload)
            return cls(
                interaction_id=expired.interaction_id,
                response={},
                responded_by="",
                responded_at=expired.expired_at,
                via="",
                expired=True,
            )
        resolved = InteractionResolved.model_validate(payload)
        return cls(
            interaction_id=resolved.interaction_id,
            response=dict(resolved.response),
            responded_by=resolved.responded_by,
            responded_at=resolved.responded_at,
            via=resolved.via,
        )

    @staticmethod
    def withdrawal_payload(withdrawal: InteractionWithdrawn, at: datetime) -> dict[str, Any]:
        """What an agent keeps of a card it withdrew, read back by ``from_payload``: a handler
        that asks the card again after a restart is given this instead of waiting forever."""
        return {**withdrawal.wire(), "withdrawnAt": wire_time(at)}

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

    @property
    def action(self) -> dict[str, Any] | None:
        """The action decided on, ``{"kind", "fields"}``, as the person last saw or edited it."""
        value = self.response.get("action")
        return value if isinstance(value, dict) else None

    @property
    def action_hash(self) -> str | None:
        value = self.response.get("actionHash")
        return value if isinstance(value, str) else None

    @property
    def edited_from(self) -> str | None:
        """The hash of the proposed action when the person edited it before deciding."""
        value = self.response.get("editedFrom")
        return value if isinstance(value, str) else None

    @property
    def edited(self) -> bool:
        return self.edited_from is not None

    def approved_action(
        self, expected: ProposedAction, *, approving: Collection[str] = ("approve",)
    ) -> dict[str, Any]:
        """The fields to act on, once approved: ``expected``'s, or a permitted edit of them.

        Raises ``NotApproved`` for any option but the ``approving`` ones (a card with
        options of its own names them) and ``ActionMismatch`` when the decision is bound to
        an action that is neither ``expected`` nor an edit its ``editable`` fields allow —
        the hash is recomputed here, not taken on trust.
        """
        if self.option_id not in approving:
            raise NotApproved(self.option_id)
        decided = self.action or {}
        kind, fields = decided.get("kind"), decided.get("fields")
        if (
            not isinstance(kind, str)
            or not isinstance(fields, dict)
            or action_hash(kind, fields) != self.action_hash
        ):
            raise ActionMismatch(expected.hash, self.action_hash)
        if self.action_hash == expected.hash:
            return dict(fields)
        if kind != expected.kind or self.edited_from != expected.hash:
            raise ActionMismatch(expected.hash, self.action_hash)
        try:
            if (
                set(fields) != set(expected.fields)
                or expected.edited(fields).hash != self.action_hash
            ):
                raise ActionMismatch(expected.hash, self.action_hash)
        except ActionEditError:
            raise ActionMismatch(expected.hash, self.action_hash) from None
        return dict(fields)
