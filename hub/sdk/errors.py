"""What can go wrong for an adapter, as exceptions a program can switch on.

The hub answers a refused uplink with an ``error`` frame carrying a stable ``code``, a
``message`` and a ``hint`` (the next step for a person); ``HubRefused`` carries the three so
a caller can show them or branch on the code. ``AuthenticationFailed`` is the one the SDK does
not retry: a wrong pairing code or a revoked credential will not get better by reconnecting.
"""

from __future__ import annotations

from typing import Any


class SdkError(Exception):
    """Root of every error the SDK raises on purpose."""


class HubRefused(SdkError):
    """The hub refused something; ``code`` is stable, ``hint`` says what to do next.

    The arguments come in the order of the hub's own errors (``message`` first, ``code`` and
    ``hint`` by name), so code that reads both sides reads them alike.
    """

    def __init__(
        self, message: str, *, code: str = "error", hint: str = "", **details: Any
    ) -> None:
        super().__init__(f"[{code}] {message}" + (f" (next: {hint})" if hint else ""))
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details

    @classmethod
    def from_frame(cls, payload: dict[str, Any]) -> HubRefused:
        known = {"id", "code", "message", "hint"}
        return cls(
            str(payload.get("message") or "the hub refused the frame"),
            code=str(payload.get("code") or "error"),
            hint=str(payload.get("hint") or ""),
            **{k: v for k, v in payload.items() if k not in known},
        )


class AuthenticationFailed(HubRefused):
    """The pairing code or the credential was refused; reconnecting will not help."""


class NotPaired(SdkError):
    """There is neither a stored credential nor a pairing code to get one."""


class TaskCancelled(SdkError):
    """A person asked to stop this task; the SDK confirms ``cancelled`` when it propagates."""

    def __init__(self, task_id: str, reason: str = "") -> None:
        super().__init__(f"task {task_id} was cancelled" + (f": {reason}" if reason else ""))
        self.task_id = task_id
        self.reason = reason


class AgentClosed(SdkError):
    """The agent was closed while a call still waited for the hub."""


class NotApproved(SdkError):
    """The person did not approve, so there is no action to take."""

    def __init__(self, option_id: str | None) -> None:
        super().__init__(f"the decision was {option_id!r}, not an approval: do not act")
        self.option_id = option_id


class ActionMismatch(SdkError):
    """The decision is bound to a different action than the one about to be taken.

    Acting anyway would do something no person approved: ask again with the action as it
    stands now.
    """

    def __init__(self, expected: str, decided: str | None) -> None:
        super().__init__(
            f"the decision approved action {decided or '(none)'}, not {expected}: "
            "request approval for this action again"
        )
        self.expected = expected
        self.decided = decided
