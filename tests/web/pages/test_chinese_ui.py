"""The Chinese UI leaves no English in what a person reads: every page of a workspace with
something in it, the pages of a stranger, and the hub's refusals (a wrong password, an
email taken, a form it cannot accept).

What may stay as written: what the agents sent (shown as sent, never translated), proper
names (LineUp, Telegram, Claude Code, …), addresses, commands and codes, and acronyms.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from quart import Quart

from hub.core.people.accounts import workspaces_of
from hub.core.people.invitations import invite
from hub.core.store.models import Artifact, Role, User
from tests.web.pages.conftest import Browser
from tests.web.pages.world import SECRET_KEY, build_world, card

ZH = {"Accept-Language": "zh-CN,zh;q=0.9"}
KINDS = ("approval_high", "approval_action", "choice", "multi", "input", "review")
# What build_world's agent says beyond its cards (tests/web/pages/world.py).
AGENT_SAID = ["builder", "Site rebuild", "Tidy the dependencies and plan the migration",
              "Sorting", "Plan ready", "plan", "Scan the repository", "dependency-report",
              "tasks", "approvals", "python", "javascript:alert('att')",
              "javascript:alert('artifact')", "true", "false"]  # fmt: skip
PROPER_NAMES = ["LineUp Hub", "LineUp", "Telegram", "Slack", "Claude Code", "Codex", "GitHub",
                "Web Push", "Python", "English", "iPhone", "iPad", "Chrome", "Firefox",
                "Safari", "Android", "iOS", "Bearer", "base64url",
                "Set up Telegram"]  # the title of a section of the hub's English docs  # fmt: skip
PROPER_NAMES += ["Lark", "Set up Feishu / Lark"]  # Feishu's name abroad; a docs section's title
# Addresses, paths, file names, emails, codes in snake_case, kebab-case or dotted (event
# types), anything with a digit (ids, hashes, versions), `quoted commands`, rules as
# coding agents write them (Bash(git push:*)), commands' flags, acronyms (API, SDK, UTC).
NOT_WORDS = re.compile(
    r"`[^`]*`|\w+\([^)]*\)|\S*(?:://|@|/|\\)\S*|\S+\.(?:json|md|eml|toml|com|test|example)\b"
    r"|\b\w+(?:[_.-]\w+)+\b|\S*\d\S*|--?\w+|\b[A-Z]{2,6}s?\b"
)
# Elements whose text is a command, code or value, not words: shown exactly as typed.
VERBATIM = {"code", "pre", "kbd", "samp", "script", "style", "svg"}


class VisibleText(HTMLParser):
    """The text a person reads or hears: element text outside verbatim elements, and the
    labels, placeholders and titles that stand for words."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._verbatim = 0
        self._strings = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "script" and named.get("id") == "ui-strings":
            self._strings = True  # the scripts' strings: shown when the scripts need them
        if tag in VERBATIM:
            self._verbatim += 1
        for attribute in ("aria-label", "placeholder", "title", "alt"):
            if named.get(attribute):
                self.parts.append(str(named[attribute]))
        if tag == "input" and named.get("type") in ("submit", "button") and named.get("value"):
            self.parts.append(str(named["value"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in VERBATIM:
            self._verbatim = max(0, self._verbatim - 1)
        if tag == "script":
            self._strings = False

    def handle_data(self, data: str) -> None:
        if self._strings:
            self.parts.extend(_strings_in(list(json.loads(data).values())))
        elif not self._verbatim:
            self.parts.append(data)


def _strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings_in(v)] + [str(k) for k in value]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []


def agent_text() -> list[str]:
    said = [s for kind in KINDS for s in _strings_in(card(kind, ""))] + AGENT_SAID
    return [s.strip() for s in said if s.strip()]


def english_left(html: str, allowed: list[str]) -> list[str]:
    parser = VisibleText()
    parser.feed(html)
    text = " ".join(parser.parts)
    for known in sorted(allowed, key=len, reverse=True):  # a sentence before its words
        text = re.sub(rf"(?<!\w){re.escape(known)}(?!\w)", " ", text)
    text = NOT_WORDS.sub(" ", text)
    return sorted(set(re.findall(r"[A-Za-z]{2,}(?:[ '’][A-Za-z]{2,})*", text)))


async def test_no_english_left_on_any_page_or_refusal(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    user = await User.get(id=ada.user_id)
    world = await build_world(ada.workspace_id, ada.user_id, kinds=KINDS)
    artifact = await Artifact.filter(task_id=world.task_id).first()
    assert artifact is not None
    _invitation, token = await invite(ada.workspace_id, Role.MEMBER, by=user, secret_key=SECRET_KEY)
    workspace = (await workspaces_of(user))[0].name  # named at sign-up; its owner renames it
    allowed = [*agent_text(), *PROPER_NAMES, user.email, user.display_name or "", workspace]
    ids = {
        "workspace_id": ada.workspace_id,
        "agent_id": world.agent.id,
        "conversation_id": world.conversation_id,
        "task_id": world.task_id,
        "interaction_id": world.cards["approval_action"],
        "artifact_id": artifact.id,
    }
    paths = [f"/w/{ada.workspace_id}/interactions/{i}" for i in world.cards.values()]
    for rule in app.url_map.iter_rules():
        if rule.websocket or "GET" not in (rule.methods or ()) or not rule.rule.startswith("/w/"):
            continue
        path = rule.rule
        for argument in rule.arguments:
            path = path.replace(f"<{argument}>", ids[argument])
        paths.append(path)
    assert len(paths) > 12  # the list really is the app's

    leaks: dict[str, list[str]] = {}
    seen = 0
    for path in paths:
        response = await ada.client.get(path, headers=ZH)
        if not response.content_type.startswith("text/html"):
            continue
        html = await response.get_data(as_text=True)
        assert response.status_code < 500, (path, html[:300])
        seen += 1
        leaks[path] = english_left(html, allowed)
    assert seen > 10

    stranger = Browser(app.test_client())
    for path in ("/login", "/signup", f"/join/{token}", "/no/such/page"):
        response = await stranger.client.get(path, headers={**ZH, "Accept": "text/html"})
        leaks[path] = english_left(await response.get_data(as_text=True), allowed)

    # The hub's refusals: each page shows the error box with message, hint and code.
    refusals = {
        "wrong password": ("/login", {"email": user.email, "password": "not it"}, 401),
        "email taken": ("/signup", {"email": user.email, "password": "long enough pass"}, 409),
        "weak password": ("/signup", {"email": "new@example.com", "password": "short"}, 422),
    }
    for what, (path, form, status) in refusals.items():
        response = await stranger.post(path, form, token_from=path, headers=ZH)
        assert response.status_code == status, what
        leaks[what] = english_left(await response.get_data(as_text=True), allowed)
    bad_forms = {
        "empty conversation": (f"/w/{ada.workspace_id}/conversations", {"title": ""}),
        "unknown time zone": (
            f"/w/{ada.workspace_id}/settings/preferences",
            {"language": "", "time_zone": "Mars/Olympus"},
        ),
    }
    for what, (path, form) in bad_forms.items():
        response = await ada.post(
            path, form, token_from=f"/w/{ada.workspace_id}/settings", headers=ZH
        )
        assert response.status_code == 422, (what, response.status_code)
        leaks[what] = english_left(await response.get_data(as_text=True), allowed)

    left = {where: words for where, words in leaks.items() if words}
    print(json.dumps(left, indent=1, ensure_ascii=False))
    assert left == {}
