"""Rich display and widgets without a hub: HTML for Jupyter, text for a terminal, agent text
always inert, a card read-only without a way to answer, and the live task panel."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hub.protocol.interactions import InteractionCard
from hub.sdk import Resolution, Task
from hub.sdk.display import ArtifactInfo, InteractionInfo, TaskInfo
from hub.sdk.notebook import CardWidget, TaskPanel

HOSTILE = '<img src=x onerror="alert(1)">'


def resolved(card: dict[str, Any], response: dict[str, Any], via: str = "telegram") -> dict:
    return {
        "id": "int_1",
        "type": card["type"],
        "status": "resolved",
        "card": card,
        "response": response,
        "respondedBy": "user:usr_1",
        "respondedByName": "Ada",
        "via": via,
        "respondedAt": "2026-05-01T10:02:07Z",
    }


def test_a_task_shows_as_html_and_as_text_with_its_cards_and_artifacts() -> None:
    card = {"type": "approval", "title": HOSTILE, "risk": "high", "options": []}
    task = TaskInfo(
        {
            "id": "task_1",
            "title": f"Migrate {HOSTILE}",
            "status": "succeeded",
            "progress": 100,
            "summary": "done <b>now</b>",
            "interactions": [resolved(card, {"optionId": "approve"})],
            "artifacts": [
                {"name": "report", "url": "https://example.com/r.pdf", "mimeType": "text/pdf"},
                {"name": "sneaky", "url": "javascript:alert(1)"},
            ],
        }
    )
    page = task._repr_html_()
    assert "<img" not in page and "<b>now" not in page and "&lt;img" in page
    assert 'href="https://example.com/r.pdf"' in page
    assert 'href="javascript' not in page and "javascript:alert(1)" in page  # shown, not linked
    assert "⛔ High risk" in page  # risk in words and an icon, not colour alone
    bundle = task._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    text = str(task)
    assert text.startswith(f"Task Migrate {HOSTILE} — succeeded")
    assert "approve — by Ada via Telegram, 2026-05-01 10:02 UTC" in text
    assert "Artifact report: https://example.com/r.pdf" in text
    assert task["status"] == "succeeded" and dict(task)["id"] == "task_1"


def test_interaction_outcomes_read_the_same_on_every_status() -> None:
    choice = {
        "type": "choice",
        "title": "Regions",
        "multiple": True,
        "options": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "US"}],
    }
    picked = InteractionInfo(resolved(choice, {"optionIds": ["eu", "us"]}, via="notebook"))
    assert "Outcome: Europe, US — by Ada via a notebook" in str(picked)
    secret = {"type": "input", "title": "Key", "input": {"sensitive": True}}
    hidden = InteractionInfo(resolved(secret, {"text": "hunter2"}, via="web"))
    assert "Outcome: an answer (hidden: sensitive) — by Ada via the web" in str(hidden)
    assert "hunter2" not in str(hidden) and "hunter2" not in hidden._repr_html_()
    expired = InteractionInfo({"status": "expired", "card": {"type": "input", "title": "x"}})
    assert "expired; nothing was decided" in expired._repr_html_()
    pending = InteractionInfo({"status": "pending", "card": choice})
    assert "Waiting for an answer: Europe / US" in str(pending)
    assert (
        str(ArtifactInfo({"name": "a", "url": "https://x.test/a", "summary": "tiny"}))
        == "Artifact a: https://x.test/a — tiny"
    )


def test_a_card_without_a_way_to_answer_is_read_only_and_inert() -> None:
    card = InteractionCard.model_validate(
        {"type": "review", "title": HOSTILE, "content": HOSTILE, "details": {"x": HOSTILE}}
    )
    widget = CardWidget({"id": "int_9", "card": card.wire(), "status": "pending"}, note="Later.")
    assert not widget.answerable
    assert all(control.disabled for control in widget.controls)
    header = widget.widget.children[0].value
    assert "<img" not in header and header.count("&lt;img") == 2
    assert "Waiting for an answer" in widget.status.value
    widget.update(resolved(card.wire(), {"optionId": "request_changes", "comment": HOSTILE}))
    assert "Request changes" in widget.status.value and "<img" not in widget.status.value
    assert "lineup-decided" in widget.widget._dom_classes
    assert "Outcome: Request changes" in str(widget)


class _NoUplink:
    """Enough of an Uplink for a Task whose helpers are not called."""


def test_the_task_panel_follows_the_task_and_its_pending_card() -> None:
    task = Task(_NoUplink(), {"id": "task_7", "title": "Nightly job", "status": "running"})  # type: ignore[arg-type]
    panel = TaskPanel(task)
    assert "running" in panel.state.value and panel.card is None
    task.percent, task.summary = 40, "halfway <there>"
    card = InteractionCard.model_validate({"id": "int_7", "type": "approval", "title": "Go?"})
    task.pending, task.status = card, "waiting_for_human"
    task._changed()
    assert "waiting for a person, 40%" in panel.state.value and panel.bar.value == 40
    assert panel.summary.value == "halfway &lt;there&gt;"
    assert panel.card is not None and panel.card.id == "int_7" and not panel.card.answerable
    assert "answer it in the hub" in panel.card.note.value
    answer = Resolution("int_7", {"optionId": "approve"}, "user:usr_1", datetime.now(UTC), "web")
    task.pending, task.status = None, "running"
    task.answers.append((card, answer))
    task._changed()
    assert not panel.card.pending and "via the web" in panel.card.status.value
    html = task._repr_mimebundle_()["text/html"]
    assert "Nightly job" in html and "Approve" in html
    panel.close()
    task.status = "succeeded"
    task._changed()
    assert "running" in panel.state.value  # no longer following


async def test_a_high_risk_card_asks_to_confirm_before_sending() -> None:
    sent: list[dict[str, Any]] = []

    async def respond(answer: dict[str, Any]) -> dict[str, Any]:
        sent.append(answer)
        return resolved(card.wire(), answer, via="notebook")

    card = InteractionCard.model_validate({"type": "approval", "title": "Drop it?", "risk": "high"})
    widget = CardWidget({"id": "int_3", "card": card.wire(), "status": "pending"}, respond)
    widget.option_buttons["reject"].click()
    assert widget.confirm_row.layout.display == "flex" and "Reject" in widget.confirm_text.value
    widget.back.click()  # taken back: nothing sent, nothing waiting to confirm
    assert widget.confirm_row.layout.display == "none"
    widget.confirm.click()
    await widget.answered()
    assert sent == []
    widget.option_buttons["approve"].click()
    widget.confirm.click()
    await widget.answered()
    assert sent == [{"optionId": "approve"}] and not widget.answerable
    assert all(control.disabled for control in (*widget.controls, widget.confirm))


def test_an_editable_action_links_to_its_web_form_and_a_fixed_one_does_not() -> None:
    page = "http://127.0.0.1:8000/w/wsp_1/interactions/int_4"

    def shown(editable: list[str]) -> str:
        card = InteractionCard.model_validate(
            {
                "type": "approval",
                "title": "Run it?",
                "action": {"kind": "shell.command", "fields": {"args": "-v"}, "editable": editable},
            }
        )
        widget = CardWidget({"id": "int_4", "card": card.wire(), "status": "pending"}, web_url=page)
        return "".join(getattr(child, "value", "") for child in widget.widget.children)

    assert f'href="{page}"' in shown(["args"]) and "Edit and approve on the web" in shown(["args"])
    assert "Edit and approve on the web" not in shown([])


async def test_an_edited_field_is_sent_in_the_type_the_action_holds() -> None:
    fields = {"db": "prod", "batch": 500, "dry": False, "steps": ["a", "b"], "note": "x"}
    card = InteractionCard.model_validate(
        {
            "type": "approval",
            "title": "Run it?",
            "action": {"kind": "db.migration", "fields": fields, "editable": list(fields)[1:]},
        }
    )
    sent: list[dict[str, Any]] = []

    async def respond(answer: dict[str, Any]) -> dict[str, Any]:
        sent.append(answer)
        return {"status": "pending"}

    widget = CardWidget({"id": "int_5", "card": card.wire(), "status": "pending"}, respond)
    assert set(widget.edits) == {"batch", "dry", "steps", "note"}  # "db" is not editable
    assert widget.edits["steps"].value == "a\nb" and widget.edits["dry"].value == "false"
    widget.edits["batch"].value = "250"
    widget.edits["dry"].value = "true"
    widget.edits["steps"].value = "a\n\nc\n"
    widget.option_buttons["reject"].click()  # a "no" approves nothing, edited or not
    await widget.answered()
    widget.option_buttons["approve"].click()
    await widget.answered()
    assert "action" not in sent[0]
    assert sent[1]["action"] == {"batch": 250, "dry": True, "steps": ["a", "c"]}
    assert sent[1]["actionHash"] == sent[0]["actionHash"]  # bound to the action shown


def test_every_surface_is_named_as_the_hub_names_it() -> None:
    from hub.sdk.display import outcome_text

    card = {"type": "approval", "options": [{"id": "approve", "label": "Approve"}]}
    for via, said in (("slack", "Slack"), ("feishu", "Feishu"), ("policy", "the approval policy")):
        assert f"Approve — by Ada via {said}" in str(
            outcome_text(resolved(card, {"optionId": "approve"}, via))
        )
