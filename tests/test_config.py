"""Settings: environment, TOML file, defaults, and errors that name the setting."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from hub.config import load_settings, settings_table
from hub.core.errors import ConfigurationError


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("LINEUP_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults_serve_sqlite_under_var(tmp_path: Path) -> None:
    settings = load_settings()
    assert settings.host == "127.0.0.1" and settings.port == 8000
    assert settings.resolved_database_url == f"sqlite://{tmp_path / 'var' / 'hub.sqlite3'}"
    assert settings.heartbeat_interval_s == 25 and settings.agent_grace_period_s == 900
    assert settings.resolved_public_url == "http://127.0.0.1:8000"


def test_a_generated_secret_key_is_kept_private_and_reused(tmp_path: Path) -> None:
    first = load_settings().secret_key
    key_file = tmp_path / "var" / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(first) >= 32 and load_settings().secret_key == first


def test_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEUP_PORT", "9001")
    monkeypatch.setenv("LINEUP_HEARTBEAT_INTERVAL_S", "0.5")
    monkeypatch.setenv("LINEUP_DATABASE_URL", "postgres://u@127.0.0.1/db")
    settings = load_settings()
    assert settings.port == 9001 and settings.heartbeat_interval_s == 0.5
    assert settings.is_postgres


def test_toml_file_with_environment_winning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "lineup.toml").write_text('port = 7000\nhost = "0.0.0.0"\n')
    monkeypatch.setenv("LINEUP_PORT", "7001")
    settings = load_settings()
    assert settings.host == "0.0.0.0" and settings.port == 7001


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LINEUP_PORT", "eighty"),
        ("LINEUP_DATABASE_URL", "mysql://x"),
        ("LINEUP_SECRET_KEY", "short"),
        ("LINEUP_HEARTBEAT_INTERVAL_S", "-1"),
        ("LINEUP_LOG_LEVEL", "LOUD"),
        ("LINEUP_TRUSTED_PROXY_HOPS", "-1"),
    ],
)
def test_a_wrong_setting_is_named(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as failure:
        load_settings()
    assert variable in failure.value.message


def test_an_unknown_key_in_the_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "lineup.toml").write_text("prot = 7000\n")
    with pytest.raises(ConfigurationError) as failure:
        load_settings()
    assert "LINEUP_PROT" in failure.value.message


def test_a_missing_config_file_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEUP_CONFIG", "/nowhere/lineup.toml")
    with pytest.raises(ConfigurationError) as failure:
        load_settings()
    assert "/nowhere/lineup.toml" in failure.value.message


def test_every_setting_is_in_the_documented_table() -> None:
    from hub.config import Settings

    table = settings_table()
    for name in Settings.model_fields:
        assert f"`LINEUP_{name.upper()}`" in table
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert table in readme, "README's settings table is stale: paste `lineup config` into it"
