"""Every refusal a page can show reads in the page's language: the pages translate a
``HubError`` by its stable code; the JSON API keeps the core's English words."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from quart import Quart

from hub.core import errors
from hub.core.errors import HubError
from hub.core.store.models import InteractionStatus, User
from hub.i18n import speaking
from hub.protocol.actions import EDIT_REFUSED
from hub.protocol.interactions import ACTION_CHANGED
from hub.web.pages.error_messages import MESSAGES, for_person
from tests.web.pages.conftest import Browser

ROOT = Path(__file__).resolve().parents[3] / "hub"
# Where the errors a page shows are raised: the core, the pages, and the host's checks of
# who is asking and of the ids in a path. The JSON API, the sockets and the connectors speak
# to programs, in English.
SOURCES = [ROOT / "core", ROOT / "web" / "pages", ROOT / "host" / "identity.py"]
PATH_KINDS = ("workspace", "agent", "artifact", "conversation", "interaction", "invitation",
              "rule", "subscription", "task", "token", "user")  # fmt: skip


def _literal_codes() -> set[str]:
    codes: set[str] = set()
    files = [p for s in SOURCES for p in ([s] if s.is_file() else s.rglob("*.py"))]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.keyword) and node.arg == "code" else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                codes.add(value.value)
    return codes


def codes_a_page_can_show() -> set[str]:
    classes = {
        c.code for c in vars(errors).values() if isinstance(c, type) and issubclass(c, HubError)
    }
    classes.discard(errors.ConfigurationError.code)  # raised at start, before any page
    return (
        _literal_codes()
        | classes
        | {f"{kind}_not_found" for kind in PATH_KINDS}  # hub.host.path_ids
        | {f"interaction_{status.value}" for status in InteractionStatus}
        | {"telegram_not_configured"}  # hub.channels.runtime, for the Telegram link
        | {"feishu_not_configured"}  # the same, for the Feishu link
        | {"slack_not_configured"}  # the same, for the Slack link
        | {"invalid_response", ACTION_CHANGED, EDIT_REFUSED}  # hub.protocol's answer rules
    )


def test_the_catalogue_holds_every_code_a_page_can_show() -> None:
    codes = codes_a_page_can_show()
    assert len(codes) > 100  # the search really found the raises
    missing = sorted(codes - set(MESSAGES) - {"ABCD-EFGH"})  # an example in a docstring
    assert missing == []


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_each_sentence_reads_in_chinese_with_its_values(code: str) -> None:
    error = HubError("The English words.", code=code, retryAfterS=30)
    with speaking("zh_Hans"):
        shown = for_person(error)
    assert shown["code"] == code
    for text in (shown["message"], shown["hint"]):
        assert text and not re.search(r"[A-Za-z]{3,}", _proper_names(text)), (code, text)
    with speaking("en"):
        assert for_person(error)["message"] == "The English words."


def _proper_names(text: str) -> str:
    names = r"API|NUL|Telegram|Slack|U\+0000|Europe/Berlin|Asia/Shanghai|7KQ2-M9XD|ID"
    return re.sub(names, "", text)


async def test_login_and_signup_refusals_in_the_page_language(app: Quart, browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    email = (await User.get(id=ada.user_id)).email
    stranger = Browser(app.test_client())
    zh = {"Accept-Language": "zh-CN,zh;q=0.9"}

    async def post(path: str, form: dict[str, str], headers: dict[str, str]) -> tuple[int, str]:
        response = await stranger.post(path, form, token_from=path, headers=headers)
        return response.status_code, await response.get_data(as_text=True)

    wrong = {"email": email, "password": "wrong one"}
    status, html = await post("/login", wrong, zh)
    assert status == 401 and "邮箱或密码错误。" in html and "Wrong email" not in html
    status, html = await post("/login", wrong, {})
    assert status == 401 and "Wrong email or password." in html

    taken = {"email": email, "password": "long enough pass", "display_name": ""}
    status, html = await post("/signup", taken, zh)
    assert status == 409 and "该邮箱地址已注册账户。" in html and "exists already" not in html
    status, html = await post("/signup", taken, {})
    assert status == 409 and f"An account for {email} exists already." in html
    # The JSON API's contract stays English, whatever the browser's language.
    response = await stranger.client.post(
        "/api/v1/auth/register", json={"email": email, "password": "long enough pass"}, headers=zh
    )
    assert (await response.get_json())["error"]["message"].startswith("An account for")


async def test_the_scripts_get_the_pages_words_for_the_apis_refusals(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    _status, html = await ada.page(ada.w("/settings"), headers={"Accept-Language": "zh-CN"})
    strings = json.loads(re.search(r'id="ui-strings">(.*?)</script>', html, re.S)[1])  # type: ignore[index]
    assert strings["errors"]["too_many_devices"] == "已有 20 个浏览器开启了推送。"
    _status, html = await ada.page(ada.w("/settings"), headers={"Accept-Language": "en"})
    strings = json.loads(re.search(r'id="ui-strings">(.*?)</script>', html, re.S)[1])  # type: ignore[index]
    assert strings["errors"] == {}  # English pages show the API's own message
