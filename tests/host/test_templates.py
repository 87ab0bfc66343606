"""Pages render in one synchronous pass (hub.host.templates), and a page rendered through
Quart's own ``render_template`` fails loudly instead of taking the async path."""

from __future__ import annotations

from pathlib import Path

import pytest
import quart

from hub.config import Settings
from hub.host.app import create_app
from hub.host.templates import render_template


def make_app(tmp_path: Path) -> quart.Quart:
    return create_app(Settings(data_dir=tmp_path, secret_key="s" * 40))


async def test_a_page_renders_synchronously_with_quarts_context(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.test_request_context("/login"):
        page = await render_template("pages/login.html", next_url="/", email="")
        template = app.jinja_env.get_template("pages/login.html")
    assert not app.jinja_env.is_async and not template.environment.is_async
    assert 'name="csrf_token"' in page  # a global of the web surface, in Quart's context


async def test_quarts_render_template_is_refused(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.test_request_context("/login"):
        with pytest.raises(RuntimeError, match="async mode"):
            await quart.render_template("pages/login.html")
