"""An app on the test's database and people who signed up through the API."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from quart import Quart
from quart.typing import TestClientProtocol

from hub.config import load_settings
from hub.core.log.events import last_sequence
from hub.host.app import create_app
from hub.web.api.auth import ACCOUNT_FAILURES, LOGIN_FAILURES

PASSWORD = "correct horse battery"
_numbers = itertools.count()


@dataclass
class Person:
    """Someone signed up through the API, holding a bearer token and a workspace."""

    client: TestClientProtocol
    user_id: str
    workspace_id: str
    token: str
    email: str
    # Where the workspace's log stood once signed up: signing up and creating the token are
    # the log's first entries (the audit trail records them), so a test counts from here.
    log_start: int = 0
    extra_headers: dict[str, str] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}", **self.extra_headers}

    def url(self, path: str) -> str:
        return f"/api/v1/workspaces/{self.workspace_id}{path}"

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any]:
        response = await self.client.get(self.url(path), headers=self.headers, **kwargs)
        return response.status_code, await response.get_json()

    async def post(self, path: str, json: Any = None, **kwargs: Any) -> tuple[int, Any]:
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if json is not None:
            kwargs["json"] = json
        response = await self.client.post(self.url(path), headers=headers, **kwargs)
        return response.status_code, await response.get_json()


@pytest.fixture(autouse=True)
def _fresh_login_limits() -> Iterator[None]:
    LOGIN_FAILURES.reset()
    ACCOUNT_FAILURES.reset()
    yield
    LOGIN_FAILURES.reset()
    ACCOUNT_FAILURES.reset()


@pytest.fixture
def app(db: str, tmp_path: Path) -> Quart:
    return create_app(
        load_settings(
            data_dir=tmp_path,
            secret_key="api-test-secret-" + "k" * 32,
            public_url="http://hub.example.test",
        )
    )


@pytest.fixture
def sign_up(app: Quart):  # type: ignore[no-untyped-def]
    async def sign_up(name: str = "person") -> Person:
        client = app.test_client()
        email = f"{name}{next(_numbers)}@example.com"
        response = await client.post(
            "/api/v1/auth/register",
            json={"email": email, "password": PASSWORD, "displayName": name},
        )
        assert response.status_code == 201, await response.get_data()
        ids = await response.get_json()
        response = await client.post("/api/v1/auth/tokens", json={"name": "tests"})
        assert response.status_code == 201, await response.get_data()
        token = (await response.get_json())["token"]
        # A fresh client: the person talks to the API by token, not by the sign-up cookie.
        log_start = await last_sequence(ids["workspaceId"])
        return Person(app.test_client(), ids["userId"], ids["workspaceId"], token, email, log_start)

    return sign_up
