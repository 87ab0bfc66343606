"""The notebook tests reuse the API tests' app and sign-up fixtures."""

from tests.web.api.conftest import _fresh_login_limits, app, sign_up

__all__ = ["_fresh_login_limits", "app", "sign_up"]
