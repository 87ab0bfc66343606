"""Members through the API: the last owner of a workspace can be neither removed nor demoted,
even by themselves; the refusal says what to do and changes nothing."""

from __future__ import annotations

from hub.core.log.events import last_sequence
from tests.web.api.conftest import Person


async def test_the_only_owner_can_neither_leave_nor_step_down(sign_up) -> None:  # type: ignore[no-untyped-def]
    ada: Person = await sign_up("ada")
    bea: Person = await sign_up("bea")
    status, invitation = await ada.post("/invitations", {"role": "member"})
    assert status == 201
    joined = await bea.client.post(
        "/api/v1/invitations/accept",
        json={"token": invitation["url"].rsplit("/", 1)[1]},
        headers=bea.headers,
    )
    assert joined.status_code in (200, 201), await joined.get_data(as_text=True)

    before = await last_sequence(ada.workspace_id)
    for path, body in (
        (f"/members/{ada.user_id}/remove", None),
        (f"/members/{ada.user_id}/role", {"role": "member"}),
        (f"/members/{ada.user_id}/role", {"role": "viewer"}),
    ):
        status, error = await ada.post(path, body)
        assert status == 409, (path, error)
        assert error["error"]["code"] == "last_owner"
        assert "owner first" in error["error"]["hint"]
    assert await last_sequence(ada.workspace_id) == before
    status, listed = await ada.get("/members")
    assert {m["userId"]: m["role"] for m in listed["members"]} == {
        ada.user_id: "owner",
        bea.user_id: "member",
    }

    # With a second owner, the first may step down and leave.
    status, _ = await ada.post(f"/members/{bea.user_id}/role", {"role": "owner"})
    assert status == 200
    status, removed = await ada.post(f"/members/{ada.user_id}/remove")
    assert (status, removed) == (200, {"removed": ada.user_id})
    listed = await (await bea.client.get(ada.url("/members"), headers=bea.headers)).get_json()
    assert [(m["userId"], m["role"]) for m in listed["members"]] == [(bea.user_id, "owner")]
