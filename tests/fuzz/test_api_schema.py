"""schemathesis over ``/api/openapi.json`` against a live hub, as a person with a bearer
token: whatever it sends, the hub never answers 5xx, and every answer matches the schema
the hub itself publishes.

``make test`` tries a few cases per operation; ``LINEUP_API_FUZZ_EXAMPLES`` raises it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from hub.core.people.accounts import create_api_token, create_user
from hub.testing import HubProcess, TestDatabases, opened
from tests.core.agent_setup import SECRET_KEY, paired_agent
from tests.figures import API_CASES, record

EXAMPLES = int(os.environ.get("LINEUP_API_FUZZ_EXAMPLES", "4"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


class LiveApi:
    def __init__(self, url: str, token: str, workspace_id: str) -> None:
        self.url = url
        self.token = token
        self.workspace_id = workspace_id


@pytest.fixture(scope="module")
def live_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    root = tmp_path_factory.mktemp("api-fuzz")
    databases = TestDatabases(root, os.environ.get("LINEUP_TEST_DATABASE_URL") or None)

    async def prepare() -> tuple[str, str, str]:
        url = await databases.create()
        async with opened(url):
            user, workspace = await create_user("schema@example.com", "correct horse")
            _, token = await create_api_token(user, "schemathesis")
            await paired_agent(workspace)
        return url, token, workspace.id

    url, token, workspace_id = asyncio.run(prepare())
    hub = HubProcess(url, root / "hub", LINEUP_SECRET_KEY=SECRET_KEY).start()
    try:
        yield LiveApi(hub.url, token, workspace_id)
        assert "Traceback" not in hub.log(), hub.log()[-3000:]
    finally:
        hub.stop()
        asyncio.run(databases.drop(url))
        asyncio.run(databases.close())


def test_the_api_never_fails_and_keeps_its_schema(live_api: LiveApi) -> None:
    schema = schemathesis.openapi.from_url(live_api.url + "/api/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, "the published schema lost its operations"
    failures: list[str] = []
    for operation in operations:

        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def one_case(case: schemathesis.Case) -> None:
            # Random ids all read as not found: aim some cases at the caller's workspace.
            if case.path_parameters and "ws" in case.path_parameters and hash(str(case)) % 2:
                case.path_parameters["ws"] = live_api.workspace_id
            response = case.call(
                base_url=live_api.url,
                headers={"Authorization": f"Bearer {live_api.token}"},
                timeout=30,
            )
            record(API_CASES)
            case.validate_response(response, checks=CHECKS)

        try:
            one_case()
        # schemathesis reports failures as a BaseExceptionGroup; collect every operation's,
        # then report them all.
        except (Exception, BaseExceptionGroup) as failure:
            failures.append(f"{operation.label}: {failure}")
    assert not failures, "\n\n".join(failures)
