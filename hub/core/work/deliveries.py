"""When an answer reached the agent that asked for it (``interaction.delivered``).

An answer is stored the moment a person gives it (``interaction.resolved``, addressed to
the agent); the agent may be away then, and gets it in its replay when it comes back. LAP
agents do not acknowledge the frames they are sent, so what the hub knows, and records, is
the moment its gateway wrote the answer on the socket that holds the agent's connection:
``interaction.delivered``, by ``system``, once per card. Its envelope id names the card, so
the replay after a reconnect, or another hub process sending it again, adds nothing: the
first delivery stands. The card shows it (``Interaction.delivered_at``), and until then,
while the agent is offline, that the answer waits for it.
"""

from __future__ import annotations

from hub.core.log.events import append_event
from hub.core.store.models import Event, Interaction


async def record_delivery(resolved: Event) -> None:
    """Note that ``resolved`` (an ``interaction.resolved``) was sent to its agent just now."""
    interaction_id = resolved.payload.get("interactionId")
    if not isinstance(interaction_id, str) or not interaction_id:
        return
    # Sent again (an agent reconnecting from an older position): the first delivery stands
    # (the projection keeps it), and the downlink waits for each record before its next
    # frame, so a replay of many answers would wait for as many writes.
    if await Interaction.filter(
        id=interaction_id, workspace_id=resolved.workspace_id, delivered_at__isnull=False
    ).exists():
        return
    await append_event(
        resolved.workspace_id,
        "interaction.delivered",
        {"interactionId": interaction_id, "sequence": int(resolved.sequence)},
        actor="system",
        task_id=resolved.task_id,
        conversation_id=resolved.conversation_id,
        envelope_id=f"delivered-{interaction_id}",
    )


__all__ = ["record_delivery"]
