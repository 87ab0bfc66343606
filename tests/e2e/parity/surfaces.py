"""Each surface a person answers cards on, acted on as the person would, over real sockets.

A surface is one class: it finds a card where it shows (``shown``), answers it the way a
person does there (``answer``, after an answer it must refuse), and checks that a decided
card is read-only there, naming who decided and through which surface (``read_only``); the
extras (an edited action, a quorum vote, a batch) and the race (``ready``: everything short
of the last press, which it returns) are methods of the same class. ``SURFACES`` is the table
the suites are parametrised over.

How to add a surface (MCP elicitation, Slack, Feishu, ...):

1. Subclass ``Surface`` here: ``name`` is the ``via`` the hub records for an answer given
   on it, ``said`` how an outcome names it ("by Ada via Slack").
2. Implement ``shown``, ``answer``, ``read_only`` and ``ready`` for the five kinds of
   ``tests.e2e.parity.kinds``; ``answer_edited``, ``vote`` / ``votes_shown`` and
   ``answer_batch`` for the extras. Drive the real client or peer the surface speaks to (a
   local peer in ``tests/channels/peers.py`` style, started in ``stage.staged``); assert
   what the person would see, never the hub's database.
3. Add the class to ``SURFACES``. Every cell of both suites then runs for it, and
   ``docs/channels.md``'s parity table gets a column: the test ids name the cells.
4. A surface that cannot do something natively (edit an action in a chat, say) does it the
   way it sends people to (its signed link to the web form) and says so in its docstring.
"""

from __future__ import annotations

import asyncio
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from email.message import EmailMessage
from typing import Any, ClassVar

import httpx

from hub.sdk.display import VIA_WORDS
from hub.testing import eventually
from tests.channels.peers import SentMessage
from tests.e2e.parity.forms import forms_in
from tests.e2e.parity.stage import ADA_TELEGRAM, WAIT_S, Asked, Stage

Fire = Callable[[], Awaitable[None]]


def said(via: str) -> str:
    """How every surface's outcome sentence names ``via`` ("by Ada via Telegram")."""
    return VIA_WORDS.get(via, via)


class Surface(ABC):
    name: ClassVar[str]  # the ``via`` an answer given here is recorded with
    # The ``via`` of an edited action: a surface that edits behind a link to the web's form
    # records ``web``.
    edits_via: ClassVar[str] = ""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    @abstractmethod
    async def shown(self, card: Asked) -> None:
        """Wait until ``card`` shows here, answerable."""

    @abstractmethod
    async def answer(self, card: Asked) -> None:
        """Give ``card.kind.wrong`` (refused, nothing decided), then ``card.kind.answer``."""

    @abstractmethod
    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        """``card`` shows here as decided by ``who`` via ``via``, and takes no answer."""

    @abstractmethod
    async def ready(self, card: Asked) -> Fire:
        """Everything short of the last press of ``card.kind.answer``; returns that press."""

    @abstractmethod
    async def answer_edited(self, card: Asked) -> None:
        """Approve ``card``'s action with ``card.kind.answer["action"]`` changed."""

    @abstractmethod
    async def vote(self, card: Asked) -> None:
        """Approve a quorum card: a vote; the copy here then says the vote stands."""

    @abstractmethod
    async def votes_shown(self, card: Asked, approvals: int) -> None:
        """The quorum card shows ``approvals`` of its 2 approvals so far."""

    @abstractmethod
    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        """Answer the task's approvals ``cards`` together: "approve all" when every pick is
        ``approve``, else item by item, each its pick."""

    async def told(self, card: Asked, winner: str) -> None:  # noqa: B027 - optional
        """After a race: what this surface's last press was answered, when ``winner``
        (another surface) decided first; a surface whose copy only turns read-only has
        nothing more to check than ``read_only``."""

    async def prepared(self) -> None:  # noqa: B027 - optional
        """Called once per module after the stage is up."""


# --- the web: headless Chromium on the hub's own pages ------------------------------------


class Web(Surface):
    name = "web"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.page = stage.page
        self.raced: dict[str, str] = {}  # the page a race's press led to

    def _card(self, card: Asked) -> Any:
        return self.page.locator(f"[data-card='{card.id}']")

    async def shown(self, card: Asked) -> None:
        await self.page.goto(self.stage.card_url(card.id))
        await self._card(card).locator("form[data-card-form]").wait_for()
        await self.page.wait_for_function("() => document.body.dataset.live === 'live'")

    async def _fill(self, card: Asked, answer: dict[str, Any]) -> Any:
        """Fill the card's form with ``answer``; the button that sends it."""
        form = self._card(card).locator("form[data-card-form]")
        if "optionIds" in answer:
            for option in answer["optionIds"]:
                await form.locator(f"input[name='optionIds'][value='{option}']").check()
            return form.locator("button[type='submit']")
        if "text" in answer:
            await form.locator(f"#card-{card.id}-text").fill(answer["text"])
            return form.locator("button[type='submit']")
        if answer.get("comment"):
            await form.locator("details.comment-box > summary").click()
            await form.locator(f"#card-{card.id}-comment").fill(answer["comment"])
        return form.locator(f"button[name='optionId'][value='{answer['optionId']}']")

    async def answer(self, card: Asked) -> None:
        wrong = card.kind.wrong
        if wrong is not None and "text" in wrong:
            # Checked in the page before anything is sent: the field says why.
            field = self._card(card).locator(f"#card-{card.id}-text")
            await field.fill(wrong["text"])
            await field.press("Enter")
            await self.page.wait_for_function(
                "(id) => document.getElementById(id).getAttribute('aria-invalid') === 'true'",
                arg=f"card-{card.id}-text",
            )
        elif wrong is not None:
            async with self.page.expect_navigation():
                await (await self._fill(card, wrong)).click()
            await self._card(card).locator(".form-error").wait_for()
        assert (await self.stage.card(card.id))["status"] == "pending"
        await self._send(card, await self._fill(card, card.kind.answer))

    async def _send(self, card: Asked, button: Any) -> None:
        async with self.page.expect_navigation():
            await button.click()
        await self.page.locator(".notice, .flash, [role='status']").first.wait_for()

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        # Live: the page open since the card arrived redraws it, without a reload.
        if not self.page.url.startswith(self.stage.card_url(card.id)):
            await self.page.goto(self.stage.card_url(card.id))
        shown = self._card(card)
        await self.page.locator(f"[data-card='{card.id}'][data-card-status='resolved']").wait_for()
        assert await shown.locator("form[data-card-form]").count() == 0
        outcome = await shown.locator("[data-outcome]").inner_text()
        assert f"Decided by {who}" in outcome and f"via {via}" in outcome, outcome

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        button = await self._fill(card, card.kind.answer)

        handle = await button.element_handle()  # found now: the press is one round trip

        async def fire() -> None:
            async with self.page.expect_navigation() as navigation:
                await handle.evaluate("button => button.click()")
            # The page the answer led to, as it came (a live refresh may redraw it since).
            self.raced[card.id] = await (await navigation.value).text()

        return fire

    async def told(self, card: Asked, winner: str) -> None:
        page = self.raced.pop(card.id)
        notices = re.findall(r'<p class="notice" role="status">([^<]*)</p>', page)
        # Never told it was sent. The flash saying who won is the session's: a request of
        # the page's own live refresh, in flight at the press, may show it instead.
        assert not any("sent to the agent" in n for n in notices), notices
        for notice in notices:  # the core's sentence, naming the surface as recorded
            assert f"Already decided by Ada via {winner}" in notice, notice

    async def answer_edited(self, card: Asked) -> None:
        form = self._card(card).locator("form[data-card-form]")
        await form.locator("details.action-edit > summary").click()
        for name, value in card.kind.answer["action"].items():
            await form.locator(f"[name='action.{name}']").fill(str(value))
        await self._send(card, form.locator("button[name='optionId'][value='approve']"))

    async def vote(self, card: Asked) -> None:
        await self._send(card, await self._fill(card, {"optionId": "approve"}))
        await self._card(card).locator("[data-my-vote]").wait_for()

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        if not self.page.url.startswith(self.stage.card_url(card.id)):
            await self.page.goto(self.stage.card_url(card.id))
        await (
            self._card(card)
            .locator("[data-vote-count]", has_text=f"{approvals} of 2 approvals so far")
            .wait_for()
        )

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        await self.page.goto(self.stage.task_url(cards[0].task_id))
        await self.page.locator("[data-batch-item]").nth(len(cards) - 1).wait_for()
        if set(picks) == {"approve"}:
            button = self.page.get_by_role("button", name=f"Approve all ({len(cards)})")
        else:
            for card, pick in zip(cards, picks, strict=True):
                await self.page.locator(f"input[name='choice-{card.id}'][value='{pick}']").check()
            button = self.page.get_by_role("button", name="Send these choices")
        async with self.page.expect_navigation():
            await button.click()
        await self.page.get_by_text(re.compile(rf"{len(cards)} answers")).first.wait_for()


# --- email: the mails a real SMTP server received, their links fetched over HTTP ----------

_LINK = re.compile(r"^- (.+?)(?: \(.*\))?: (http://127\.0\.0\.1:\d+/[ab]/[\w.\-]+)\r?$", re.M)


class Email(Surface):
    """A mail client: it reads the mail and fetches a link (GET shows the card), and the
    person submits the page's form (POST decides). No session, no cookies: the signed link
    is all it has. Editing an action happens behind the mail's "Edit and approve on the
    web" link, so an edit is recorded ``via web``."""

    name = "email"
    edits_via = "web"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.links: dict[str, dict[str, str]] = {}
        self.raced: dict[str, httpx.Response] = {}  # a race's POST, answered

    async def _mail(self, title: str) -> EmailMessage:
        def find() -> EmailMessage | None:
            mails = self.stage.smtp.to(self.stage.ada.email)
            return next((m for m in mails if title in str(m["Subject"])), None)

        found: EmailMessage = await eventually(find, within=WAIT_S)
        return found

    @staticmethod
    def links_of(mail: EmailMessage) -> dict[str, str]:
        plain = mail.get_body(preferencelist=("plain",))
        assert plain is not None
        return dict(_LINK.findall(plain.get_content()))

    async def shown(self, card: Asked) -> None:
        self.links[card.id] = self.links_of(await self._mail(card.title))
        assert self.links[card.id], "the mail has no answer links"

    def _link(self, card: Asked, answer: dict[str, Any]) -> str:
        links = self.links[card.id]
        if "optionId" in answer:
            return links[card.kind.label(answer["optionId"])]
        return links["Answer"]

    @staticmethod
    def _fields(answer: dict[str, Any]) -> dict[str, str | list[str]]:
        fields: dict[str, str | list[str]] = {}
        if "optionIds" in answer:
            fields["optionIds"] = list(answer["optionIds"])
        if "text" in answer:
            fields["text"] = answer["text"]
        if answer.get("comment"):
            fields["comment"] = answer["comment"]
        for name, value in (answer.get("action") or {}).items():
            fields[f"action.{name}"] = str(value)
        return fields

    async def _open(self, client: httpx.AsyncClient, link: str, card: Asked) -> Any:
        """GET the link: a page with the card and its form, and nothing decided."""
        page = await client.get(link)
        assert page.status_code == 200, page.text
        assert card.title in page.text
        assert (await self.stage.card(card.id))["status"] == "pending"  # a GET decides nothing
        (form,) = forms_in(page.text)
        return form

    async def _post(
        self, client: httpx.AsyncClient, link: str, card: Asked, answer: dict[str, Any]
    ) -> httpx.Response:
        form = await self._open(client, link, card)
        return await client.post(link, **form.submit(self._fields(answer)))

    async def answer(self, card: Asked) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            link = self._link(card, card.kind.answer)
            if card.kind.wrong is not None:
                refused = await self._post(client, link, card, card.kind.wrong)
                assert refused.status_code == 422, refused.text
                assert "That answer does not fit" in refused.text
            decided = await self._post(client, link, card, card.kind.answer)
            assert decided.status_code == 200, decided.text
            assert "by Ada via email" in decided.text

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            for link in self.links[card.id].values():
                page = await client.get(link)
                assert f"by {who} via {said(via)}" in page.text, page.text
                assert "<form" not in page.text
                late = await client.post(link, data={"optionId": "approve", "text": "x@y.example"})
                # 409 "already decided"; 410 "used already" for the link that decided.
                assert late.status_code in (409, 410), late.text
                assert f"by {who} via {said(via)}" in late.text

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        client = httpx.AsyncClient(timeout=30)
        link = self._link(card, card.kind.answer)
        form = await self._open(client, link, card)

        async def fire() -> None:
            try:
                self.raced[card.id] = await client.post(
                    link, **form.submit(self._fields(card.kind.answer))
                )
            finally:
                await client.aclose()

        return fire

    async def told(self, card: Asked, winner: str) -> None:
        late = self.raced.pop(card.id)
        assert late.status_code == 409, late.text
        assert f"Already decided by Ada via {said(winner)}" in late.text

    async def answer_edited(self, card: Asked) -> None:
        edit = self.links[card.id]["Edit and approve on the web"]
        async with httpx.AsyncClient(timeout=30) as client:
            form = await self._open(client, edit, card)  # the option is picked on the page
            chosen = {"optionId": "approve", **self._fields(card.kind.answer)}
            decided = await client.post(edit, **form.submit(chosen))
        assert decided.status_code == 200, decided.text

    async def vote(self, card: Asked) -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            voted = await self._post(client, self.links[card.id]["Approve"], card, {})
        assert voted.status_code == 200, voted.text
        assert "Your vote is recorded: 1 of 2 approvals." in voted.text

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        # A sent mail cannot change: its link pages show the count as it is now.
        async with httpx.AsyncClient(timeout=30) as client:
            page = await client.get(self.links[card.id]["Reject"])
        assert f"{approvals} of 2 approvals so far." in page.text or (
            f"Your vote is recorded: {approvals} of 2 approvals." in page.text
        ), page.text

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        mail = await self._mail(f"{len(cards)} approvals wait in “{cards[0].task_title}”")
        links = self.links_of(mail)
        async with httpx.AsyncClient(timeout=30) as client:
            if set(picks) == {"approve"}:
                plain = mail.get_body(preferencelist=("plain",))
                assert plain is not None and f"Approve all ({len(cards)})" in plain.get_content()
                link = links["Approve all"]  # what follows in brackets reads as a description
                chosen: dict[str, str | list[str]] = {}
            else:
                link = links["Answer item by item"]
                chosen = {f"choice-{c.id}": p for c, p in zip(cards, picks, strict=True)}
            page = await client.get(link)
            assert page.status_code == 200, page.text
            assert all(c.title in page.text for c in cards)
            assert {(await self.stage.card(c.id))["status"] for c in cards} == {"pending"}
            (form,) = forms_in(page.text)
            decided = await client.post(link, **form.submit(chosen))
        assert decided.status_code == 200, decided.text
        assert f"Recorded {len(cards)} answers." in decided.text


# --- Telegram: the hub's bot, through a local Bot API server -----------------------------


class Telegram(Surface):
    """Ada's phone: presses and replies sent as Telegram updates that the hub long-polls.
    Editing an action happens behind the message's "Edit and approve on the web" button (a
    signed link, opened as a phone's browser would), recorded ``via web``."""

    name = "telegram"
    edits_via = "web"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.bot_api = stage.bot_api
        self.messages: dict[str, SentMessage] = {}
        self.stale: dict[str, str] = {}  # a button's data, to press once the card is decided
        self.raced: dict[str, Callable[[], Any]] = {}  # how to find a race's press answered

    async def _message(self, starts: str) -> SentMessage:
        def find() -> SentMessage | None:
            chat = self.bot_api.chat(ADA_TELEGRAM)
            return next((m for m in chat if m.text.startswith(starts)), None)

        found: SentMessage = await eventually(find, within=WAIT_S)
        return found

    async def shown(self, card: Asked) -> None:
        message = await self._message(f"<b>{card.title}</b>")
        self.messages[card.id] = message
        if message.buttons():  # an input card takes a reply instead
            self.stale[card.id] = message.buttons()[0]["callback_data"]

    async def _press(self, message: SentMessage, label: str) -> dict[str, Any]:
        query = self.bot_api.press(ADA_TELEGRAM, message, message.button(label)["callback_data"])
        answered: dict[str, Any] = await eventually(
            lambda: self.bot_api.answers.get(query), within=WAIT_S
        )
        return answered

    async def _reply(self, to: int, text: str) -> SentMessage:
        """Reply to message ``to``; the bot's next message in the chat."""
        before = {m.message_id for m in self.bot_api.chat(ADA_TELEGRAM)}
        self.bot_api.send_text(ADA_TELEGRAM, text, reply_to=to)
        found: SentMessage = await eventually(
            lambda: next(
                (m for m in self.bot_api.chat(ADA_TELEGRAM) if m.message_id not in before), None
            ),
            within=WAIT_S,
        )
        return found

    async def answer(self, card: Asked) -> None:
        message = self.messages[card.id]
        kind, answer = card.kind, card.kind.answer
        if "optionIds" in answer:
            refused = await self._press(message, "Submit")
            assert refused.get("show_alert") is True  # nothing ticked: told why
            for option in answer["optionIds"]:
                await self._press(message, kind.label(option))
            await self._press(message, f"Submit ({len(answer['optionIds'])})")
        elif "text" in answer:
            retry = await self._reply(message.message_id, kind.wrong["text"])  # type: ignore[index]
            assert "doesn't fit" in retry.text
            await self._reply(retry.message_id, answer["text"])
        elif answer.get("comment"):
            await self._press(message, kind.label(answer["optionId"]))
            prompt = self.bot_api.chat(ADA_TELEGRAM)[-1]
            await self._reply(prompt.message_id, answer["comment"])
        else:
            await self._press(message, kind.label(answer["optionId"]))

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        message = self.messages[card.id]
        await eventually(lambda: f"by {who} via {said(via)}" in message.text, within=WAIT_S)
        assert message.buttons() == []
        if card.id in self.stale:
            # A press on a copy of the old buttons is answered with who decided first.
            query = self.bot_api.press(ADA_TELEGRAM, message, self.stale[card.id])
            late = await eventually(lambda: self.bot_api.answers.get(query), within=WAIT_S)
            assert f"by {who} via {said(via)}" in late["text"], late
        else:  # so is a late reply
            told = await self._reply(message.message_id, "ops@example.com")
            assert f"by {who} via {said(via)}" in told.text, told.text

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        message = self.messages[card.id]
        answer, kind = card.kind.answer, card.kind
        if "optionIds" in answer:
            for option in answer["optionIds"]:
                await self._press(message, kind.label(option))
            data = message.button(f"Submit ({len(answer['optionIds'])})")["callback_data"]
        elif "text" in answer:

            async def reply() -> None:
                self._raced_reply(card, message.message_id, answer["text"])

            return reply
        elif answer.get("comment"):
            await self._press(message, kind.label(answer["optionId"]))
            prompt = self.bot_api.chat(ADA_TELEGRAM)[-1]

            async def comment() -> None:
                self._raced_reply(card, prompt.message_id, answer["comment"])

            return comment
        else:
            data = message.button(kind.label(answer["optionId"]))["callback_data"]

        async def press() -> None:
            query = self.bot_api.press(ADA_TELEGRAM, message, data)
            self.raced[card.id] = lambda: (self.bot_api.answers.get(query) or {}).get("text")

        return press

    def _raced_reply(self, card: Asked, to: int, text: str) -> None:
        before = {m.message_id for m in self.bot_api.chat(ADA_TELEGRAM)}
        self.bot_api.send_text(ADA_TELEGRAM, text, reply_to=to)

        def answered() -> str | None:
            chat = self.bot_api.chat(ADA_TELEGRAM)
            fresh = [m.text for m in chat if m.message_id not in before]
            # A reply to a card decided meanwhile is answered with the outcome.
            return next((t for t in fresh if "by Ada via" in t), None)

        self.raced[card.id] = answered

    async def told(self, card: Asked, winner: str) -> None:
        answered = await eventually(self.raced.pop(card.id), within=WAIT_S)
        assert f"by Ada via {said(winner)}" in answered, answered
        assert not answered.startswith("Thank you"), answered

    async def answer_edited(self, card: Asked) -> None:
        link = self.messages[card.id].button("Edit and approve on the web")["url"]
        async with httpx.AsyncClient(timeout=30) as phone:
            page = await phone.get(link)
            assert page.status_code == 200 and card.title in page.text
            (form,) = forms_in(page.text)
            fields = {f"action.{k}": str(v) for k, v in card.kind.answer["action"].items()}
            decided = await phone.post(link, **form.submit({"optionId": "approve", **fields}))
        assert decided.status_code == 200, decided.text

    async def vote(self, card: Asked) -> None:
        message = self.messages[card.id]
        await self._press(message, "Approve")
        await eventually(
            lambda: "Your vote is recorded: 1 of 2 approvals." in message.text, within=WAIT_S
        )
        assert message.buttons() == []  # the voter's copy asks no more

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        message = self.messages[card.id]
        await eventually(lambda: f"{approvals} of 2 approvals" in message.text, within=WAIT_S)

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        batch = await self._message(f"<b>{len(cards)} approvals wait in “{cards[0].task_title}”")
        if set(picks) == {"approve"}:
            answered = await self._press(batch, f"Approve all ({len(cards)})")
        else:  # item by item: each card's own buttons
            for card, pick in zip(cards, picks, strict=True):
                await self._press(self.messages[card.id], pick.capitalize())
            return
        assert f"Recorded {len(cards)} answers." in answered["text"], answered


# --- the notebook inbox: a real Jupyter kernel, its widgets pressed as a browser would ----


class Notebook(Surface):
    """Ada's notebook inbox (``hub.notebook``) in a real kernel; clicks and typed values go
    to its widgets as comm messages, as JupyterLab sends them."""

    name = "notebook"

    def __init__(self, stage: Stage) -> None:
        super().__init__(stage)
        self.kernel = stage.kernel

    async def _widget(self, card: Asked, *classes: str) -> str:
        return await self.kernel.widget(f"lineup-card-{card.id}", *classes)

    async def shown(self, card: Asked) -> None:
        await self._widget(card, "lineup-card")
        status = await self._widget(card, "lineup-status")
        assert "Decided" not in str(self.kernel.value(status))

    async def _status(self, card: Asked, holds: Callable[[str], bool]) -> str:
        status = await self._widget(card, "lineup-status")
        value: str = await self.kernel.until(status, "value", lambda v: holds(str(v)))
        return value

    async def _fill(self, card: Asked, answer: dict[str, Any]) -> str:
        """Fill the widget's fields with ``answer``; the comm id of the button that sends it."""
        if "optionIds" in answer:
            for option in answer["optionIds"]:
                self.kernel.set_value(await self._widget(card, f"lineup-option-{option}"), True)
            return await self._widget(card, "lineup-submit")
        if "text" in answer:
            self.kernel.set_value(await self._widget(card, "lineup-text"), answer["text"])
            return await self._widget(card, "lineup-submit")
        if answer.get("comment"):
            self.kernel.set_value(await self._widget(card, "lineup-comment"), answer["comment"])
        return await self._widget(card, f"lineup-option-{answer['optionId']}")

    async def answer(self, card: Asked) -> None:
        if card.kind.wrong is not None:
            self.kernel.click(await self._fill(card, card.kind.wrong))
            said_why = await self._status(card, lambda v: "Not sent" in v)
            assert "Not sent" in said_why
        self.kernel.click(await self._fill(card, card.kind.answer))
        await self._status(card, lambda v: "Decided" in v)

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        status = await self._status(card, lambda v: "Decided" in v)
        assert f"by {who} via {said(via)}" in status, status
        for comm_id in self.kernel.find(f"lineup-card-{card.id}"):
            state = self.kernel.widgets[comm_id]
            if state.get("_model_name") in ("ButtonModel", "CheckboxModel", "TextModel"):
                await self.kernel.until(comm_id, "disabled", lambda d: d is True)

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        button = await self._fill(card, card.kind.answer)

        async def click() -> None:
            self.kernel.click(button)

        return click

    async def answer_edited(self, card: Asked) -> None:
        for name, value in card.kind.answer["action"].items():
            self.kernel.set_value(await self._widget(card, f"lineup-edit-{name}"), str(value))
        self.kernel.click(await self._widget(card, "lineup-option-approve"))
        await self._status(card, lambda v: "Decided" in v)

    async def vote(self, card: Asked) -> None:
        self.kernel.click(await self._widget(card, "lineup-option-approve"))
        await self._status(card, lambda v: "You voted: Approve." in v)
        approve = await self._widget(card, "lineup-option-approve")
        await self.kernel.until(approve, "disabled", lambda d: d is True)

    async def votes_shown(self, card: Asked, approvals: int) -> None:
        votes = await self._widget(card, "lineup-votes")
        await self.kernel.until(
            votes, "value", lambda v: f"{approvals} of 2 approvals so far" in str(v)
        )

    async def answer_batch(self, cards: list[Asked], picks: list[str]) -> None:
        task = f"lineup-batch-{cards[0].task_id}"
        if set(picks) == {"approve"}:
            self.kernel.click(await self.kernel.widget(task, "lineup-approve-all"))
        else:
            for card, pick in zip(cards, picks, strict=True):
                choice = await self.kernel.widget(task, f"lineup-item-{card.id}")
                entries = self.kernel.value(choice, "_options_labels")
                self.kernel.set_value(choice, entries.index(pick.capitalize()), key="index")
            self.kernel.click(await self.kernel.widget(task, "lineup-send-items"))
        status = await self.kernel.widget(task, "lineup-batch-status")
        await self.kernel.until(
            status, "value", lambda v: f"Recorded {len(cards)} answers." in str(v)
        )


SURFACES: dict[str, type[Surface]] = {
    surface.name: surface for surface in (Web, Email, Telegram, Notebook)
}


async def race(fires: dict[str, Fire], first: str) -> None:
    """Every surface's last press within the same few milliseconds: ``first`` at once, the
    others in a random order after it (the surfaces' own latencies differ by tens of
    milliseconds, so each surface's turn at going first lets each of them win some)."""

    async def after_a_moment(name: str, fire: Fire) -> None:
        if name != first:
            await asyncio.sleep(random.uniform(0, 0.05))
        await fire()

    await asyncio.gather(*(after_a_moment(name, fire) for name, fire in fires.items()))
