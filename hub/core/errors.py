"""The hub's one error tree.

Every error a person, an agent or another program can meet is a ``HubError``. Each class
knows how it travels: the HTTP status for the JSON API, the WebSocket close code for a
socket that must end, a stable ``code`` that programs switch on and people can copy into a
bug report, and a ``hint`` that tells a person what to do next.

Codes are part of the public contract: once shipped, a code keeps its meaning.
"""

from __future__ import annotations

from typing import Any, ClassVar


class HubError(Exception):
    """Root of every error the hub reports on purpose."""

    status: ClassVar[int] = 500
    close_code: ClassVar[int] = 1011  # internal error
    code: ClassVar[str] = "internal_error"
    hint: ClassVar[str] = "Retry; if it happens again, report the diagnostic code."

    def __init__(
        self, message: str, *, hint: str | None = None, code: str | None = None, **details: Any
    ) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint  # type: ignore[misc]
        if code is not None:
            self.code = code  # type: ignore[misc]
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.details:
            body["details"] = self.details
        return body


class InvalidInput(HubError):
    status = 422
    close_code = 1007  # invalid frame payload data
    code = "invalid_input"
    hint = "Fix the fields named in the message and send it again."


class Unauthorized(HubError):
    status = 401
    close_code = 4401
    code = "unauthorized"
    hint = "Sign in again, or send a valid bearer token in the Authorization header."


class Forbidden(HubError):
    status = 403
    close_code = 4403
    code = "forbidden"
    hint = "Ask an owner of this workspace for access."


class NotFound(HubError):
    status = 404
    close_code = 4404
    code = "not_found"
    hint = "Check the id; it may belong to another workspace or have been deleted."


class Conflict(HubError):
    status = 409
    close_code = 4409
    code = "conflict"
    hint = "Reload to see the current state, then decide again."


class IllegalTransition(Conflict):
    code = "illegal_transition"
    hint = "Read the task's status first: only the moves of the task state diagram are allowed."


class AlreadyDecided(Conflict):
    code = "already_decided"
    hint = "Nothing to do: someone else answered first. The card shows who, how and when."


class Gone(HubError):
    status = 410
    close_code = 4410
    code = "gone"
    hint = "It expired or was used already; create a new one."


class RateLimited(HubError):
    status = 429
    close_code = 4429
    code = "rate_limited"
    hint = "Wait a minute before trying again."


class PayloadTooLarge(HubError):
    status = 413
    close_code = 1009  # message too big
    code = "payload_too_large"
    hint = "Send less at once: split the content or link to it as an artifact."


class ConfigurationError(HubError):
    """A setting is missing or wrong; raised at start, before anything is served."""

    code = "configuration_error"
    hint = "Fix the setting named above (environment variable or config file) and start again."


class Unavailable(HubError):
    status = 503
    close_code = 1013  # try again later
    code = "unavailable"
    hint = "The hub cannot reach its database right now; retry in a few seconds."


def refused_answer(problem: str, rule: str) -> HubError:
    """The error for an answer that does not fit its card (``rule`` is the protocol's code).

    An action that changed since the person saw it is a conflict (409: reload and decide
    again); any other misfit is invalid input (422: fix the answer)."""
    if rule == "action_changed":
        return Conflict(
            problem,
            code=rule,
            hint="Reload the card to see the action as it stands now, then decide again.",
        )
    return InvalidInput(problem, code=rule)
