"""The UI speaks English and Simplified Chinese, and shows times in the reader's zone."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from hub.i18n import TRANSLATIONS_DIR
from hub.web.pages.i18n import language_from_header
from tests.web.pages.world import build_world


def test_the_browser_language_picks_the_catalogue() -> None:
    assert language_from_header("zh-CN,zh;q=0.9,en;q=0.8") == "zh_Hans"
    assert language_from_header("zh-Hans-CN") == "zh_Hans"
    assert language_from_header("en-GB,en;q=0.9") == "en"
    assert language_from_header("zh-TW,en;q=0.5") == "en"  # traditional script: not zh_Hans
    assert language_from_header("fr-FR") == "en"
    assert language_from_header(None) == "en"


def _source_strings() -> dict[str, str]:
    """Every fixed string of the sources ``babel.cfg`` names, with the file it is in."""
    with open(TRANSLATIONS_DIR / "babel.cfg", encoding="utf-8") as handle:
        method_map, options_map = parse_mapping_cfg(handle)
    root = TRANSLATIONS_DIR.parents[2]
    found = extract_from_dir(str(root), method_map, options_map)
    return {
        message if isinstance(message, str) else message[0]: filename
        for filename, _line, message, _comments, _context in found
    }


def test_every_string_has_a_chinese_translation() -> None:
    with open(TRANSLATIONS_DIR / "zh_Hans" / "LC_MESSAGES" / "messages.po", "rb") as handle:
        catalogue = read_po(handle)
    untranslated = [m.id for m in catalogue if m.id and not m.string]
    assert untranslated == []
    # The strings in the code, the pages' and the channels' alike, are all in the compiled
    # catalogue: a new string without `make translations` (and its translation) fails here.
    with open(TRANSLATIONS_DIR / "zh_Hans" / "LC_MESSAGES" / "messages.mo", "rb") as handle:
        compiled = read_mo(handle)
    strings = _source_strings()
    missing = [f"{where}: {s!r}" for s, where in strings.items() if not _translated(compiled, s)]
    assert missing == []
    channels = {s for s, where in strings.items() if where.startswith("hub/channels/")}
    assert {"The task “%(title)s” by %(agent)s failed.", "Tap again to confirm."} <= channels
    assert {"This link was used already.", "Type your answer"} <= channels


def _translated(catalogue: Catalog, message: str) -> bool:
    entry = catalogue.get(message)
    return entry is not None and bool(entry.string)


async def test_chinese_from_the_browser_and_english_by_setting(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    await build_world(ada.workspace_id, ada.user_id, text="x", kinds=("approval_high",))
    zh = {"Accept-Language": "zh-CN,zh;q=0.9"}
    _status, html = await ada.page(ada.w("/inbox"), headers=zh)
    assert '<html lang="zh-Hans">' in html
    assert "等待我处理" in html and "为什么需要你" in html and "高风险" in html
    # Agent text is shown as sent, never translated.
    assert "Run the production migration? x" in html

    response = await ada.post(
        ada.w("/settings/preferences"),
        {"language": "en", "time_zone": ""},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 302
    _status, html = await ada.page(ada.w("/inbox"), headers=zh)
    assert '<html lang="en">' in html and "Waiting for you" in html


async def test_times_follow_the_persons_time_zone(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    world = await build_world(ada.workspace_id, ada.user_id, kinds=())
    from hub.core.store.models import Task

    moment = datetime(2026, 7, 24, 12, 0, tzinfo=UTC)
    await Task.filter(id=world.task_id).update(created_at=moment)
    path = ada.w(f"/tasks/{world.task_id}")

    ada.client.set_cookie("localhost", "tz", "Asia/Shanghai")
    _status, html = await ada.page(path)
    assert "8:00:00" in html and "PM" in html  # 12:00 UTC is 20:00 in Shanghai

    response = await ada.post(
        ada.w("/settings/preferences"),
        {"language": "", "time_zone": "America/New_York"},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 302
    _status, html = await ada.page(path)
    assert "8:00:00" in html and "AM" in html  # the setting wins over the browser's zone

    response = await ada.post(
        ada.w("/settings/preferences"),
        {"language": "", "time_zone": "Mars/Olympus"},
        token_from=ada.w("/settings"),
    )
    assert response.status_code == 422


def test_one_word_for_agent_in_each_language() -> None:
    """English says "agent" (a Telegram bot is a bot, not an agent); Chinese says 智能体,
    never the English word or 代理 (proxy)."""
    with open(TRANSLATIONS_DIR / "zh_Hans" / "LC_MESSAGES" / "messages.po", "rb") as handle:
        catalogue = read_po(handle)
    other_words = [
        m.string for m in catalogue if m.id and re.search(r"(?i)\bagents?\b|代理", _text(m.string))
    ]
    assert other_words == []
    assert sum("智能体" in _text(m.string) for m in catalogue if m.id) > 20
    english = [m.id for m in catalogue if m.id and re.search(r"(?i)\bassistants?\b", _text(m.id))]
    assert english == []


def _text(message: str | tuple[str, ...]) -> str:
    # Placeholders (%(agent)s), addresses and file names (agent-card.json) are not words.
    text = message if isinstance(message, str) else " ".join(message)
    return re.sub(r"%\(\w+\)s|[\w:/.-]*(?:/|\.[a-z])[\w:/.-]*", "", text)
