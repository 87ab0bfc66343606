"""The error tree: every error a person can meet says how it travels and what to do next."""

from __future__ import annotations

from hub.core import errors
from hub.core.errors import HubError


def all_error_classes() -> list[type[HubError]]:
    found, pending = [HubError], [HubError]
    while pending:
        for subclass in pending.pop().__subclasses__():
            found.append(subclass)
            pending.append(subclass)
    return [c for c in found if c.__module__ == errors.__name__]


def test_each_error_has_a_status_a_close_code_a_code_and_a_hint() -> None:
    classes = all_error_classes()
    assert len(classes) > 10
    for error_class in classes:
        assert 400 <= error_class.status <= 599, error_class
        assert (
            error_class.close_code in (1007, 1009, 1011, 1013)
            or 4000 <= error_class.close_code < 5000
        )
        assert error_class.code and error_class.code == error_class.code.lower()
        assert error_class.hint.endswith(".")
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), "each class has its own stable code"


def test_an_instance_can_refine_code_and_hint_and_carry_details() -> None:
    error = errors.Conflict("Taken.", code="email_taken", hint="Log in instead.", email="a@b.c")
    assert error.to_dict() == {
        "code": "email_taken",
        "message": "Taken.",
        "hint": "Log in instead.",
        "details": {"email": "a@b.c"},
    }
    assert errors.Conflict.code == "conflict"  # the class default is untouched
