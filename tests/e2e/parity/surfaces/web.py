"""The web: headless Chromium on the hub's own pages, signed in as Ada."""

from __future__ import annotations

import re
from typing import Any

from tests.e2e.parity.stage import WAIT_S, Asked, Stage
from tests.e2e.parity.surfaces.base import TERMINAL, Fire, Surface

_NOTICE = re.compile(r'<p class="notice" role="status">([^<]*)</p>')
# Sent, or queued if the hub missed the agent's heartbeats on a busy machine meanwhile: what
# the agent heard is checked by each test.
_TAKEN = re.compile(r"(was|were) sent to the agent|(is|are) queued until the agent returns")


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

    async def _send(self, card: Asked, button: Any, said: re.Pattern[str] = _TAKEN) -> None:
        """Press ``button``; the page it led to, as it came (a live refresh may redraw it
        since), tells the person what ``said`` matches. The notice is the session's flash,
        and a live refresh of the page in flight at the press can take it first: then the
        page says nothing, and what the test checks next (what the agent heard) tells."""
        async with self.page.expect_navigation() as navigation:
            await button.click()
        told = " ".join(_NOTICE.findall(await (await navigation.value).text()))
        assert not told or said.search(told), told

    async def read_only(self, card: Asked, via: str, who: str = "Ada") -> None:
        # Live: the page open since the card arrived redraws it, without a reload.
        if not self.page.url.startswith(self.stage.card_url(card.id)):
            await self.page.goto(self.stage.card_url(card.id))
        shown = self._card(card)
        if via == TERMINAL:  # withdrawn by its agent, the answer given at its terminal
            await shown.locator("[data-withdrawn='answered_in_terminal']").wait_for()
            assert await shown.locator("form[data-card-form]").count() == 0
            return
        await self.page.locator(f"[data-card='{card.id}'][data-card-status='resolved']").wait_for()
        assert await shown.locator("form[data-card-form]").count() == 0
        decided = await shown.locator("[data-outcome]").inner_text()
        assert f"Decided by {who}" in decided and f"via {via}" in decided, decided

    async def ready(self, card: Asked) -> Fire:
        await self.shown(card)
        button = await self._fill(card, card.kind.answer)
        # The race is a press on a page that still shows the card open: a live redraw in
        # the same milliseconds (another surface's answer arriving) would take the form
        # from under the press, and the press would then send nothing at all.
        await self.page.evaluate("() => document.body.setAttribute('data-no-refresh', '')")

        async def fire() -> None:
            # Every surface's press at once loads the hub: its answer may take a while.
            async with self.page.expect_navigation(timeout=WAIT_S * 1000) as navigation:
                # One round trip (no waiting for the button to be actionable), on the button
                # as the page holds it now: a live refresh since may have redrawn the card.
                await button.evaluate("button => button.click()")
            # The page the answer led to, as it came (a live refresh may redraw it since).
            self.raced[card.id] = await (await navigation.value).text()

        return fire

    async def told(self, card: Asked, winner: str) -> None:
        page = self.raced.pop(card.id)
        notices = _NOTICE.findall(page)
        # Never told it was sent. The flash saying who won is the session's: a request of
        # the page's own live refresh, in flight at the press, may show it instead.
        assert not any("sent to the agent" in n for n in notices), notices
        for notice in notices:  # the core's sentence, naming the surface as recorded
            if winner == TERMINAL:  # the card was withdrawn in the hub: it takes no answer
                assert "Answered in the terminal; this card takes no answer" in notice, notice
            else:
                assert f"Already decided by Ada via {winner}" in notice, notice

    async def answer_edited(self, card: Asked) -> None:
        form = self._card(card).locator("form[data-card-form]")
        await form.locator("details.action-edit > summary").click()
        for name, value in card.kind.answer["action"].items():
            await form.locator(f"[name='action.{name}']").fill(str(value))
        await self._send(card, form.locator("button[name='optionId'][value='approve']"))

    async def vote(self, card: Asked) -> None:
        button = await self._fill(card, {"optionId": "approve"})
        await self._send(card, button, re.compile("Your vote is recorded: 1 of 2 approvals."))
        # The vote leads back to the inbox, where the card no longer waits for Ada; its
        # page says her vote stands.
        await self.page.goto(self.stage.card_url(card.id))
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
        await self._send(cards[0], button, re.compile(rf"^{len(cards)} answers ({_TAKEN.pattern})"))
