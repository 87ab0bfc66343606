"""One set of catalogues, spoken in whatever language the code in effect asks for."""

from __future__ import annotations

import asyncio

from jinja2 import Environment

from hub.i18n import (
    catalogue_name,
    gettext,
    install_gettext,
    language_in_effect,
    language_tag,
    speaking,
)


def test_both_spellings_of_a_language_name_the_same_catalogue() -> None:
    assert catalogue_name("zh-Hans") == catalogue_name("zh_Hans") == "zh_Hans"
    assert language_tag("zh_Hans") == language_tag("zh-Hans") == "zh-Hans"
    assert catalogue_name(None) == "en"


def test_speaking_translates_inside_the_block_only() -> None:
    assert gettext("Submit") == "Submit"
    with speaking("zh-Hans"):
        assert gettext("Submit") == "提交"
        assert gettext("Ticked: %(count)s", count=2) == "已勾选：2"
        with speaking("en"):
            assert gettext("Submit") == "Submit"
        assert language_in_effect() == "zh_Hans"
    assert language_in_effect() == "en"


def test_a_language_without_a_catalogue_reads_english() -> None:
    with speaking("fr"):
        assert gettext("Submit") == "Submit"


async def test_concurrent_tasks_each_keep_their_own_language() -> None:
    async def render(language: str) -> str:
        with speaking(language):
            await asyncio.sleep(0)  # let the other task run in between
            return gettext("Confirm your answer")

    both = await asyncio.gather(render("zh-Hans"), render("en"))
    assert both == ["确认你的回答", "Confirm your answer"]


def test_templates_escape_the_values_not_the_translation() -> None:
    env = Environment(autoescape=True)
    install_gettext(env)
    template = env.from_string('{{ _("Reason: %(error)s", error=error) }}')
    with speaking("zh-Hans"):
        assert template.render(error="<b>disk</b>") == "原因：&lt;b&gt;disk&lt;/b&gt;"
