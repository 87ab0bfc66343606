"""No page makes a person read an id: every workspace page, in a workspace that has lived a
little (agents, a task with progress and a child, decided cards with an action, a quorum's
votes, a second member, a former agent), names people and agents and tells events in words.

What counts is the visible text: the HTML without its scripts, its attributes, and what
sits behind a closed ``<details data-raw>`` (the developer toggle of a timeline, an
action's full hash): those are there for whoever asks for them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from quart import Quart

from hub.core.ids import PREFIXES, new_id
from hub.core.log.events import append_event
from hub.core.people.invitations import accept, invite
from hub.core.store.models import Interaction, Role, User
from hub.core.work.interactions import respond_to_interaction
from hub.protocol.actions import action_hash
from tests.web.api.test_route_matrix import concrete, world
from tests.web.pages.world import SECRET_KEY, build_world

_ULID = "[0-9A-HJKMNP-TV-Z]{26}"
RAW = {
    "an id": re.compile(rf"\b(?:{'|'.join(PREFIXES.values())})_{_ULID}\b"),
    "a person's or an agent's id": re.compile(r"\b(?:usr|agt)_\w"),
    "an actor string": re.compile(r"\b(?:user|agent):\S"),
    "an event type": re.compile(
        r"\b(?:task|interaction|agent|message|artifact|member|conversation|account)\.[a-z_]+\b"
    ),
    "a full hash": re.compile(r"\b[0-9a-f]{64}\b"),
}


class VisibleText(HTMLParser):
    """The text a person sees by default: no scripts or styles, no attributes, nothing inside
    a closed ``<details data-raw>``."""

    HIDDEN = frozenset({"script", "style", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        # (tag, what it does to its content: "hide", "show" — a closed toggle's summary — or "")
        self._stack: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img", "input", "meta", "link", "hr", "source", "wbr"):
            return
        names = dict(attrs)
        effect = ""
        if tag in self.HIDDEN or (tag == "details" and "data-raw" in names and "open" not in names):
            effect = "hide"
        elif tag == "summary" and self._stack and self._stack[-1][1] == "hide":
            effect = "show"
        self._stack.append((tag, effect))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self._stack) - 1, -1, -1):
            if self._stack[index][0] == tag:
                del self._stack[index:]
                return

    def handle_data(self, data: str) -> None:
        visible = True
        for _tag, effect in self._stack:
            if effect:
                visible = effect == "show"
        if visible:
            self.parts.append(data)

    @classmethod
    def of(cls, html: str) -> str:
        parser = cls()
        parser.feed(html)
        parser.close()
        return " ".join(" ".join(parser.parts).split())


def raw_ids_in(html: str) -> list[tuple[str, str]]:
    text = VisibleText.of(html)
    found = []
    for what, pattern in RAW.items():
        for match in pattern.finditer(text):
            found.append((what, text[max(0, match.start() - 80) : match.end() + 40]))
    return found


def test_the_visible_text_leaves_out_scripts_attributes_and_the_developer_toggle() -> None:
    html = (
        '<p title="user:usr_x">Ada <script>var a = "agt_1";</script>approved</p>'
        "<details data-raw><summary>For developers</summary><pre>task.status_changed</pre>"
        "<details><summary>x</summary>agent:agt_2</details></details><p>done</p>"
    )
    assert VisibleText.of(html) == "Ada approved For developers done"
    assert raw_ids_in("<p>approved by user:usr_01 action sha256:" + "a" * 64 + "</p>") != []
    assert raw_ids_in("<p>Builder reported 50 % — sorting</p>") == []


async def _lived_in(ada, bob) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The route matrix's objects, then a workspace with a history in it."""
    ids = await world(ada)
    owner = await User.get(id=ada.user_id)
    bob_user = await User.get(id=bob.user_id)
    _invitation, token = await invite(
        ada.workspace_id, Role.MEMBER, by=owner, secret_key=SECRET_KEY
    )
    await accept(token, bob_user)
    lived = await build_world(
        ada.workspace_id,
        ada.user_id,
        kinds=("approval_high", "approval_action", "choice", "multi", "input", "review"),
    )
    by_agent, task_id = f"agent:{lived.agent.id}", lived.task_id
    for progress, summary in ((70, "Sorting"), (80, ""), (90, "Checking the lock file")):
        await append_event(
            ada.workspace_id,
            "task.status_changed",
            {"taskId": task_id, "status": "running", "progress": progress, "summary": summary},
            actor=by_agent,
            task_id=task_id,
        )
    by_ada = f"user:{ada.user_id}"
    cards = lived.cards
    action = await Interaction.get(id=cards["approval_action"])
    proposed = action.payload["action"]
    answers = {
        "approval_action": {
            "optionId": "approve",
            "actionHash": action_hash(proposed["kind"], proposed["fields"]),
        },
        "choice": {"optionId": "eu"},
        "multi": {"optionIds": ["lint", "tests"]},
        "input": {"text": "https://staging.example.com"},
        "review": {"optionId": "request_changes", "comment": "Not yet"},
    }
    for kind, response in answers.items():
        await respond_to_interaction(
            ada.workspace_id, cards[kind], response, responder=by_ada, via="web"
        )
    quorum = {
        "id": new_id("interaction"),
        "type": "approval",
        "title": "Ship the release?",
        "options": [{"id": "approve", "label": "Ship"}, {"id": "reject", "label": "Hold"}],
        "policy": {"mode": "quorum", "required": 2, "approvers": [owner.email, bob_user.email]},
    }
    await append_event(
        ada.workspace_id,
        "interaction.requested",
        {"taskId": task_id, "interaction": quorum},
        actor=by_agent,
        task_id=task_id,
    )
    await respond_to_interaction(
        ada.workspace_id, quorum["id"], {"optionId": "approve"}, responder=by_ada, via="web"
    )
    await append_event(
        ada.workspace_id,
        "task.cancel_requested",
        {"taskId": ids["task_id"], "reason": "Not needed any more"},
        actor=by_ada,
        task_id=ids["task_id"],
    )
    return {
        **ids,
        "agent_id": lived.agent.id,
        "conversation_id": lived.conversation_id,
        "task_id": task_id,
        "interaction_id": cards["approval_action"],
        "cards": ",".join([*cards.values(), quorum["id"]]),
        "other_task": ids["task_id"],
        "other_agent": ids["agent_id"],
    }


async def test_no_page_shows_a_raw_id_an_actor_string_an_event_type_or_a_full_hash(
    app: Quart, browser
) -> None:  # type: ignore[no-untyped-def]
    ada, bob = await browser("Ada"), await browser("Bob")
    ids = await _lived_in(ada, bob)
    rules = [
        rule
        for rule in app.url_map.iter_rules()
        if not rule.websocket and "GET" in (rule.methods or ()) and rule.rule.startswith("/w/")
    ]
    paths = [concrete(rule, ids) for rule in rules]
    w = f"/w/{ids['ws']}"
    paths += [f"{w}/interactions/{card}" for card in ids["cards"].split(",")]
    paths += [
        f"{w}/tasks/{ids['other_task']}",
        f"{w}/agents/{ids['other_agent']}",
        *(f"{w}/tasks?view={view}&task={ids['task_id']}" for view in ("all", "active", "done")),
    ]
    seen, leaks = 0, []
    for path in paths:
        status, html = await ada.page(path)
        if status != 200 or "<html" not in html.lower():
            continue
        seen += 1
        leaks += [(path, what, where) for what, where in raw_ids_in(html)]
    assert seen > 15
    assert leaks == [], "\n".join(f"{p}: {what}: …{where}…" for p, what, where in leaks)
    # The crawl met the history it was meant to: the words replaced the ids, not the facts.
    _status, task_page = await ada.page(f"{w}/tasks/{ids['task_id']}")
    story = VisibleText.of(task_page)
    assert "Ada approved “Run this migration?”" in story
    assert "builder reported 90 % — Checking the lock file" in story
    assert "Ada voted “Ship” on “Ship the release?”" in story
    assert "(3 progress reports)" in story
    assert "task.status_changed" in task_page  # still there, behind the developer toggle
