"""Who may make an account: the hub's sign-up rule (``LINEUP_SIGNUP``).

A fresh hub has nobody to invite anyone, so its first account can always be made, and it
is the hub's admin. After that the rule decides: ``open`` lets anyone in, ``invite`` only
someone holding an invitation, ``closed`` nobody; the admin's ``lineup user create`` is the
operator's own way in and passes no rule.
"""

from __future__ import annotations

from enum import StrEnum

from hub.core.errors import Forbidden
from hub.core.store.models import User


class Signup(StrEnum):
    OPEN = "open"
    INVITE = "invite"
    CLOSED = "closed"


def check_admission(rule: Signup, *, invited: bool, first_account: bool) -> None:
    """Raise 403 ``invitation_required`` or ``signup_closed`` if ``rule`` keeps them out."""
    if first_account or rule is Signup.OPEN:
        return
    if rule is Signup.CLOSED:
        raise Forbidden(
            "This hub does not take new accounts.",
            code="signup_closed",
            hint="Ask the hub's admin to create an account for you.",
        )
    if not invited:
        raise Forbidden(
            "This hub takes new accounts by invitation only.",
            code="invitation_required",
            hint="Ask a workspace owner for an invitation link, and sign up from it.",
        )


async def refusal(rule: Signup, *, invited: bool = False) -> Forbidden | None:
    """The refusal signing up would meet now, or None: a page says so instead of a form."""
    try:
        check_admission(rule, invited=invited, first_account=not await User.exists())
    except Forbidden as error:
        return error
    return None
