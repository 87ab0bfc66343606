"""Plugin discovery through the ``lineup.plugins`` entry points."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from quart import Quart

from hub.config import load_settings
from hub.core.errors import ConfigurationError
from hub.host.app import create_app
from hub.plugins import LOADED_KEY, PLUGIN_GROUP, discover_plugins, load_plugins
from tests.core.agent_setup import SECRET_KEY


class Recorder:
    """A plugin that remembers the apps it was attached to."""

    def __init__(self) -> None:
        self.apps: list[Quart] = []

    def init_app(self, app: Quart) -> None:
        self.apps.append(app)


RECORDER = Recorder()
NOT_A_PLUGIN = object()


def entry_point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=PLUGIN_GROUP)


def test_the_gateway_is_registered_like_a_third_party_plugin() -> None:
    found = {e.name: e.value for e in discover_plugins()}
    assert found["lap_gateway"] == "plugins.lap_gateway"


def test_the_app_loads_the_installed_plugins(tmp_path: Path) -> None:
    app = create_app(load_settings(data_dir=tmp_path, secret_key=SECRET_KEY))
    assert "lap_gateway" in app.extensions[LOADED_KEY]
    assert any(rule.rule == "/lap/v0.1" and rule.websocket for rule in app.url_map.iter_rules())


def test_each_plugin_is_given_the_app() -> None:
    app = Quart(__name__)
    loaded = load_plugins(app, [entry_point("recorder", "tests.test_plugins:RECORDER")])
    assert loaded == ["recorder"] and RECORDER.apps[-1] is app


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("tests.no_such_module", "failed to load"),
        ("tests.test_plugins:NOT_A_PLUGIN", "has no init_app"),
    ],
)
def test_a_plugin_that_cannot_load_stops_the_start_naming_it(value: str, says: str) -> None:
    with pytest.raises(ConfigurationError) as refused:
        load_plugins(Quart(__name__), [entry_point("broken", value)])
    assert "'broken'" in refused.value.message and says in refused.value.message
