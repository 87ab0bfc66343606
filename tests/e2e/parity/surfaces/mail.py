"""Email: the mails a real SMTP server received, their links fetched over HTTP."""

from __future__ import annotations

import re
from email.message import EmailMessage
from typing import Any

import httpx

from hub.testing import eventually
from tests.e2e.parity.forms import forms_in
from tests.e2e.parity.stage import WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import TERMINAL, Fire, Surface, outcome

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
                assert outcome(via, who) in page.text, page.text
                assert "<form" not in page.text
                late = await client.post(link, data={"optionId": "approve", "text": "x@y.example"})
                # 409 "already decided"; 410 "used already" for the link that decided.
                assert late.status_code in (409, 410), late.text
                assert outcome(via, who) in late.text

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
        # 409 "already decided"; 410 for a card its agent withdrew (answered at the terminal)
        assert late.status_code in ((409, 410) if winner == TERMINAL else (409,)), late.status_code
        assert outcome(winner) in late.text

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
