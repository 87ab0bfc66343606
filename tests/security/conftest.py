"""The API's app and people (from the API tests) for the security suites."""

from tests.web.api.conftest import Person, _fresh_login_limits, app, sign_up

__all__ = ["Person", "_fresh_login_limits", "app", "sign_up"]
