"""Agent-supplied text comes out of every page escaped, and agent URLs become links only
when they are http(s). (The browser test proves the same in Chromium: no dialog, no request.)"""

from __future__ import annotations

from html.parser import HTMLParser

from tests.web.pages.test_access import PAGES
from tests.web.pages.world import HOSTILE, build_world


class ElementAudit(HTMLParser):
    """Collects what a browser would act on: elements, event handlers, link targets."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag in ("img", "iframe", "object", "embed"):
            self.problems.append(f"<{tag}>")
        own_file = (named.get("src") or "").startswith("/static/")
        if tag == "script" and not own_file and named.get("type") != "application/json":
            self.problems.append("inline <script>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"{name}= on <{tag}>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(
                ("javascript:", "data:")
            ):
                self.problems.append(f"{name}={value} on <{tag}>")


async def test_hostile_agent_text_is_escaped_on_every_page(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, text=HOSTILE)
    seen = 0
    for pattern in PAGES[1:]:
        path = pattern.format(
            ws=ada.workspace_id,
            conversation=world.conversation_id,
            task=world.task_id,
            agent=world.agent.id,
            card=world.cards["review"],
        )
        status, html = await ada.page(path)
        assert status == 200, path
        audit = ElementAudit()
        audit.feed(html)
        assert audit.problems == [], path
        seen += html.count("&lt;script&gt;alert(")
    assert seen >= 10  # the text is there, shown as sent, as text


async def test_an_inline_artifact_downloads_and_never_renders(browser) -> None:  # type: ignore[no-untyped-def]
    from hub.core.ids import new_id
    from hub.core.log.events import append_event

    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    artifact_id = new_id("artifact")
    await append_event(
        ada.workspace_id,
        "artifact.created",
        {
            "artifactId": artifact_id,
            "taskId": world.task_id,
            "name": "report.html",
            # base64 of <script>alert(1)</script>
            "url": "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        },
        actor=f"agent:{world.agent.id}",
        task_id=world.task_id,
    )
    _status, html = await ada.page(ada.w(f"/tasks/{world.task_id}"))
    link = f"/w/{ada.workspace_id}/artifacts/{artifact_id}/download"
    assert f'href="{link}" download' in html and 'href="data:' not in html
    response = await ada.client.get(link)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"  # never as HTML
    assert response.headers["Content-Disposition"] == 'attachment; filename="report.html"'
    assert "sandbox" in response.headers["Content-Security-Policy"]
    assert await response.get_data() == b"<script>alert(1)</script>"
