"""The page a search hit opens: shared by the JSON API (``url``) and the search page."""

from __future__ import annotations

from quart import url_for

from hub.core.work.search import SearchHit


def page_of_hit(workspace_id: str, hit: SearchHit) -> str:
    """The path of the hit's page: a task's, a card's or an agent's own, a message's
    conversation."""
    if hit.kind == "task":
        return url_for("pages.tasks.show", workspace_id=workspace_id, task_id=hit.id)
    if hit.kind == "card":
        return url_for("pages.interactions.show", workspace_id=workspace_id, interaction_id=hit.id)
    if hit.kind == "agent":
        return url_for("pages.agents.show", workspace_id=workspace_id, agent_id=hit.id)
    return url_for(
        "pages.conversations.show",
        workspace_id=workspace_id,
        conversation_id=hit.row.conversation_id,
    )
