"""Who may do what in a workspace: the one place that decides who may answer a card.

Each rule is a function of its own that raises the hub's ``Forbidden`` saying why and what
to do; ``ensure_may_answer`` runs them in turn: first the person's role, then the card's
approval policy (``hub.core.approvals.policies.ensure_named_approver``).

Owners and members answer; viewers watch. Whatever the surface — the API, a web form, an
email link, a Telegram button, a notebook — the answer reaches ``respond_to_interaction``,
which asks ``ensure_may_answer`` before anything is written, so a link or a button sent
to someone before they became a viewer (or left the workspace) stops deciding anything the
moment their role changes.
"""

from __future__ import annotations

from hub.core.approvals.policies import ensure_named_approver
from hub.core.errors import Forbidden
from hub.core.store.models import Interaction, Membership, Role

ANSWERING_ROLES = frozenset({Role.OWNER, Role.MEMBER})


class NotAllowedToAnswer(Forbidden):
    code = "not_allowed_to_answer"
    hint = "Ask an owner of the workspace to make you a member, or pass the card to a member."


async def role_in(workspace_id: str, user_id: str) -> Role | None:
    """The person's role in the workspace, or None when they are not a member."""
    role = (
        await Membership.filter(workspace_id=workspace_id, user_id=user_id)
        .first()
        .values_list("role", flat=True)
    )
    return Role(str(role)) if role is not None else None


async def may_answer(workspace_id: str, user_id: str) -> bool:
    return await role_in(workspace_id, user_id) in ANSWERING_ROLES


async def ensure_may_answer(interaction: Interaction, responder: str) -> None:
    """Refuse (403 ``not_allowed_to_answer``) unless ``responder`` ("user:<id>") is an
    owner or member of the interaction's workspace, or the hub itself ("hub:<rule>")."""
    kind, _, user_id = responder.partition(":")
    if kind == "hub":
        # The hub itself applying a workspace's rule (say, a default on expiry): no surface
        # can claim this actor, every person's answer is recorded as "user:<id>".
        return
    role = await role_in(interaction.workspace_id, user_id) if kind == "user" else None
    if role in ANSWERING_ROLES:
        # An approval policy that names its approvers admits only them (and those
        # escalated to), among the people who may answer at all.
        await ensure_named_approver(interaction, responder)
        return
    if role == Role.VIEWER:
        raise NotAllowedToAnswer(
            "Viewers of a workspace can read its cards but not answer them.", role=role.value
        )
    raise NotAllowedToAnswer(
        "Only members of this workspace can answer its cards.",
        hint="Ask an owner of the workspace to invite you.",
    )


def ensure_owner(membership: Membership) -> None:
    """Managing members is for owners: refuse (403 ``owners_only``) everyone else."""
    if membership.role != Role.OWNER:
        raise Forbidden(
            "Only owners of a workspace can manage its members.",
            code="owners_only",
            hint="Ask an owner of the workspace to do it.",
        )


__all__ = [
    "ANSWERING_ROLES",
    "NotAllowedToAnswer",
    "ensure_may_answer",
    "ensure_owner",
    "may_answer",
    "role_in",
]
