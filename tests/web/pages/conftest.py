"""An app on the test's database, and a browser-like client that signs up through the pages."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from quart import Quart
from quart.typing import TestClientProtocol

from hub.config import load_settings
from hub.host.app import create_app
from tests.web.pages.world import SECRET_KEY

PASSWORD = "correct horse battery"
_numbers = itertools.count()
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Browser:
    """A test client that keeps its cookie and sends forms as the pages would."""

    client: TestClientProtocol
    user_id: str = ""
    workspace_id: str = ""

    async def page(self, path: str, **kwargs: Any) -> tuple[int, str]:
        response = await self.client.get(path, **kwargs)
        return response.status_code, (await response.get_data(as_text=True))

    async def csrf(self, path: str = "/login") -> str:
        _status, html = await self.page(path)
        match = _CSRF.search(html)
        assert match, f"no CSRF token on {path}"
        return match.group(1)

    async def post(self, path: str, form: dict[str, Any], *, csrf: bool = True, **kwargs: Any):  # type: ignore[no-untyped-def]
        data = dict(form)
        if csrf:
            data["csrf_token"] = await self.csrf(kwargs.pop("token_from", "/login"))
        return await self.client.post(path, form=data, **kwargs)

    def w(self, path: str) -> str:
        return f"/w/{self.workspace_id}{path}"


@pytest.fixture
def app(db: str, tmp_path: Path) -> Quart:
    return create_app(load_settings(data_dir=tmp_path, secret_key=SECRET_KEY))


@pytest.fixture
def browser(app: Quart):  # type: ignore[no-untyped-def]
    async def sign_up(name: str = "Ada") -> Browser:
        from hub.core.people.accounts import workspaces_of
        from hub.core.store.models import User

        person = Browser(app.test_client())
        email = f"{name.lower()}{next(_numbers)}@example.com"
        response = await person.post(
            "/signup", {"email": email, "password": PASSWORD, "display_name": name}
        )
        assert response.status_code == 302, await response.get_data(as_text=True)
        user = await User.get(email=email)
        person.user_id = user.id
        person.workspace_id = (await workspaces_of(user))[0].id
        return person

    return sign_up
