"""Who may answer a card: one place, asked by ``respond_to_interaction`` before it appends.

Each rule is a function of its own that raises the hub's ``Forbidden`` saying why and what
to do; ``ensure_may_answer`` runs them in turn.
"""

from __future__ import annotations

from hub.core.models import Interaction
from hub.core.policies import ensure_named_approver


async def ensure_may_answer(interaction: Interaction, responder: str) -> None:
    """Raise ``Forbidden`` when ``responder`` ("user:<id>") may not answer ``interaction``."""
    # An approval policy that names its approvers admits only them (and those escalated to).
    await ensure_named_approver(interaction, responder)


__all__ = ["ensure_may_answer"]
