"""What an agent can ask through MCP beyond one person's one answer: a quorum of named
approvers, an expiry and what it decides, bounds on a multiple choice, and several
approvals of one task at once, answered together on the task's page.

A live hub; the official MCP client on ``/mcp/`` (and ``lineup mcp`` on stdio); people
answering through the JSON API with their own tokens, as the web UI does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from hub.core.ids import new_id
from hub.core.people.accounts import create_api_token, create_user
from hub.core.store.models import Membership, Role
from tests.mcp.conftest import eventually
from tests.mcp.test_decisions import waiting_card
from tests.sdk.live import LiveHub


async def person(hub: LiveHub, name: str) -> httpx.AsyncClient:
    """A member of the hub's workspace, with an API client of their own."""
    user, _ = await create_user(f"{name}@example.com", "correct horse", name.capitalize())
    await Membership.create(
        id=new_id("membership"), workspace_id=hub.workspace_id, user=user, role=Role.MEMBER
    )
    _, token = await create_api_token(user, "tests")
    return httpx.AsyncClient(
        base_url=f"{hub.url}/api/v1/workspaces/{hub.workspace_id}",
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


async def test_a_quorum_of_named_approvers_decides_and_the_votes_come_back(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    bo, cy = await person(hub, "bo"), await person(hub, "cy")
    async with bo, cy, connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "request_approval",
            action="Fail over the primary database",
            risk="high",
            policy={"approvers": ["bo@example.com", "cy@example.com"], "quorum": 2},
        )
        card = await waiting_card(hub, "Fail over the primary database", reader=bo)
        assert card["policy"]["mode"] == "quorum" and card["policy"]["required"] == 2
        # The owner is not among the approvers: their answer is refused.
        refused = await hub.http.post(
            f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card['id']}/respond",
            json={"optionId": "approve"},
        )
        assert refused.status_code == 403
        first = await bo.post(f"/interactions/{card['id']}/respond", json={"optionId": "approve"})
        assert first.status_code == 200, first.text
        assert not call.done()
        second = await cy.post(
            f"/interactions/{card['id']}/respond",
            json={"optionId": "approve", "comment": "Replica is in sync"},
        )
        assert second.status_code == 200, second.text
        result, _ = await call

    assert result["status"] == "decided" and result["approved"] is True
    assert [v["optionId"] for v in result["votes"]] == ["approve", "approve"]
    assert len({v["actor"] for v in result["votes"]}) == 2
    assert result["votes"][1]["comment"] == "Replica is in sync"
    assert all(v["via"] == "api" and v["at"] for v in result["votes"])


async def test_an_expiry_decides_what_the_policy_says_when_nobody_answers(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        denied, _ = await agent.call(
            "request_approval",
            action="Restart the payment workers",
            risk="medium",
            policy={"expires_in_seconds": 1, "on_expiry": "deny"},
            wait_seconds=60,
        )
        lapsed, _ = await agent.call(
            "ask_choice",
            question="Which log level for the night?",
            options=[{"id": "info", "label": "Info"}, {"id": "debug", "label": "Debug"}],
            policy={"expires_in_seconds": 1},
            wait_seconds=60,
        )

    assert denied["status"] == "decided" and denied["approved"] is False
    assert denied["optionId"] == "reject" and denied["via"] == "policy"
    assert denied["decidedBy"] == "hub:policy"
    assert lapsed["status"] == "expired" and "approved" not in lapsed


async def test_a_multiple_choice_holds_the_person_to_its_bounds(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    regions = [{"id": r, "label": r.upper()} for r in ("eu", "us", "ap", "sa")]
    async with connect(hub, tmp_path / "agent") as agent:
        call = await agent.call_in_background(
            "ask_choice",
            question="Which regions get the canary?",
            options=regions,
            multiple=True,
            min_selections=2,
            max_selections=3,
        )
        card = await waiting_card(hub, "Which regions get the canary?")
        assert (card["card"]["minSelections"], card["card"]["maxSelections"]) == (2, 3)
        path = f"/api/v1/workspaces/{hub.workspace_id}/interactions/{card['id']}/respond"
        for too_few_or_many in (["eu"], ["eu", "us", "ap", "sa"]):
            refused = await hub.http.post(path, json={"optionIds": too_few_or_many})
            assert refused.status_code == 422, refused.text
        await hub.api("POST", f"/interactions/{card['id']}/respond", {"optionIds": ["eu", "ap"]})
        result, _ = await call

        wrong = await agent.client.call_tool(
            "ask_choice",
            {"question": "One?", "options": regions[:2], "min_selections": 2},
        )
    assert result["status"] == "decided" and result["optionIds"] == ["eu", "ap"]
    assert wrong.is_error and "invalid_card" in wrong.content[0].text  # type: ignore[union-attr]


async def test_approvals_asked_together_are_decided_together_on_the_task(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        task, _ = await agent.call("start_task", title="Clean up the staging account")
        call = await agent.call_in_background(
            "request_approvals",
            task_id=task["taskId"],
            items=[
                {"action": "Delete the old snapshots", "risk": "low"},
                {"action": "Stop the idle instances", "impact": "Saves 40 EUR a day"},
                {"action": "Remove the unused bucket"},
            ],
        )

        async def three_waiting() -> list[dict[str, Any]] | None:
            detail = await hub.api("GET", f"/tasks/{task['taskId']}")
            cards = [i for i in detail["interactions"] if i["status"] == "pending"]
            return cards if len(cards) == 3 else None

        cards = await eventually(three_waiting)
        by_title = {c["card"]["title"]: c["id"] for c in cards}
        decided = await hub.api(
            "POST",
            f"/tasks/{task['taskId']}/decisions",
            {
                "items": [
                    {
                        "interactionId": by_title["Delete the old snapshots"],
                        "response": {"optionId": "approve"},
                    },
                    {
                        "interactionId": by_title["Stop the idle instances"],
                        "response": {"optionId": "approve"},
                    },
                    {
                        "interactionId": by_title["Remove the unused bucket"],
                        "response": {"optionId": "reject"},
                    },
                ]
            },
        )
        assert [i["outcome"] for i in decided["items"]] == ["decided"] * 3
        result, progress = await call

    assert result["status"] == "decided"
    assert [i["handle"] for i in result["items"]] == [
        by_title["Delete the old snapshots"],
        by_title["Stop the idle instances"],
        by_title["Remove the unused bucket"],
    ]
    assert [i["approved"] for i in result["items"]] == [True, True, False]
    assert {i["via"] for i in result["items"]} == {"api"}
    assert progress.seen


async def test_a_batch_that_runs_out_of_time_returns_handles_for_the_rest(
    hub: LiveHub, connect: Any, tmp_path: Path
) -> None:
    async with connect(hub, tmp_path / "agent") as agent:
        task, _ = await agent.call("start_task", title="Rotate the credentials")
        result, _ = await agent.call(
            "request_approvals",
            task_id=task["taskId"],
            items=[{"action": "Rotate the database password"}, {"action": "Rotate the API key"}],
            wait_seconds=0.2,
        )
        first = result["items"][0]["handle"]
        await hub.respond(first, "approve")
        later, _ = await agent.call("get_decision", handle=first, wait_seconds=30)
        invalid = await agent.client.call_tool(
            "request_approvals",
            {"task_id": task["taskId"], "items": [{"action": "x"}, {"action": ""}]},
        )

    assert result["status"] == "pending"
    assert [i["status"] for i in result["items"]] == ["pending", "pending"]
    assert later["status"] == "decided" and later["approved"] is True
    assert invalid.is_error
