"""Settings, read once at start from ``LINEUP_*`` environment variables and an optional TOML file.

The table in the README is generated from the ``Settings`` fields below (``lineup config``),
so the descriptions here are the documentation. Environment variables win over the file;
the file is ``LINEUP_CONFIG`` (default ``./lineup.toml`` when it exists).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from hub.core.errors import ConfigurationError

DEFAULT_DATA_DIR = Path("var")


class PinnedRemoteAgent(BaseModel):
    """A remote A2A agent the operator pins: it appears without anyone adding it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(min_length=1, max_length=2000)
    workspace: str = Field("", description="Workspace id; empty: every workspace.")
    secret: str = Field("", description="API key or bearer token, as the agent's card asks.")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LINEUP_", extra="forbid", frozen=True)

    host: str = Field("127.0.0.1", description="Interface `lineup serve` listens on.")
    port: int = Field(8000, ge=0, le=65535, description="TCP port `lineup serve` listens on.")
    data_dir: Path = Field(
        DEFAULT_DATA_DIR,
        description="Where the embedded SQLite database and the generated secret key live.",
    )
    database_url: str = Field(
        "",
        description=(
            "`sqlite:///path/to/hub.sqlite3` or `postgres://user:pass@host:5432/db`. "
            "Empty: SQLite at `{data_dir}/hub.sqlite3`."
        ),
    )
    secret_key: str = Field(
        "",
        description=(
            "Signs sessions and links and keys hashes of short codes; at least 32 characters. "
            "Empty: generated once and kept in `{data_dir}/secret_key` (mode 0600)."
        ),
    )
    public_url: str = Field(
        "",
        description="The URL people open (used in emails and pairing commands). "
        "Empty: `http://{host}:{port}`.",
    )
    signup: Literal["open", "invite", "closed"] = Field(
        "invite",
        description="Who may make an account once the hub has its admin (the first account "
        "made on it): `open` anyone who can reach the hub; `invite` only someone holding "
        "an invitation; `closed` nobody, except the admin with `lineup user create`.",
    )
    trusted_proxy_hops: int = Field(
        0,
        ge=0,
        le=10,
        description="How many reverse proxies in front of the hub append to "
        "`X-Forwarded-For` (and set `X-Forwarded-Proto`/`-Host`). 0: those headers are "
        "ignored and the client is whoever opened the connection. Behind one proxy that "
        "sets them, 1; never more than the proxies you run, or a client can pick its address.",
    )
    heartbeat_interval_s: float = Field(
        25.0,
        gt=0,
        description="How often agents send a heartbeat; two missed mean offline "
        "(a closed socket means offline at once).",
    )
    agent_grace_period_s: float = Field(
        900.0,
        gt=0,
        description="How long running tasks of an offline agent wait before failing with "
        "`agent_unreachable`.",
    )
    hello_timeout_s: float = Field(
        30.0,
        gt=0,
        description="How long a new agent socket may take to send `agent.hello` before it "
        "is closed (1008 `hello_timeout`); raise it only for agents on very slow links.",
    )
    pairing_code_ttl_s: float = Field(600.0, gt=0, description="Lifetime of a pairing code.")
    subscriber_queue_size: int = Field(
        1000,
        ge=1,
        description="Events a slow live subscriber may fall behind before it is "
        "dropped and told to resync.",
    )
    smtp_url: str = Field(
        "", description="`smtp://user:pass@host:port` (or `smtps://`) for email; empty: off."
    )
    email_from: str = Field("lineup@localhost", description="Sender address of hub emails.")
    feishu_app_id: str = Field(
        "",
        description="Feishu/Lark app's App ID (`cli_…`, on its Credentials page); empty: "
        "Feishu off.",
    )
    feishu_app_secret: str = Field(
        "",
        validate_default=True,
        description="The Feishu/Lark app's App Secret; needed with `LINEUP_FEISHU_APP_ID`.",
    )
    feishu_verification_token: str = Field(
        "",
        validate_default=True,
        description="The app's Verification Token (Events & Callbacks → Encryption "
        "strategy); every event and card press must carry it. Needed with "
        "`LINEUP_FEISHU_APP_ID`.",
    )
    feishu_encrypt_key: str = Field(
        "",
        description="The app's Encrypt Key. Set: card presses posted to "
        "`{public_url}/feishu/card` must be encrypted and signed with it. Empty: they come "
        "in plain JSON, checked by the verification token alone. The long connection needs "
        "neither address nor key.",
    )
    feishu_api_url: str = Field(
        "https://open.feishu.cn",
        description="The open platform's root: `https://open.feishu.cn` (Feishu) or "
        "`https://open.larksuite.com` (Lark).",
    )
    telegram_bot_token: str = Field("", description="Telegram bot token; empty: Telegram off.")
    telegram_api_url: str = Field(
        "https://api.telegram.org",
        description="Bot API server root; the hub calls `{root}/bot{token}/{method}`.",
    )
    telegram_webhook_secret: str = Field(
        "",
        description="Empty: the hub long-polls Telegram. Set: Telegram posts updates to "
        "`{public_url}/telegram/webhook` with this secret token (1-256 of `A-Za-z0-9_-`).",
    )
    slack_bot_token: str = Field(
        "",
        description="The Slack app's Bot User OAuth Token (`xoxb-…`); empty: Slack off. With "
        "it, one of `LINEUP_SLACK_APP_TOKEN` and `LINEUP_SLACK_SIGNING_SECRET` is needed.",
    )
    slack_app_token: str = Field(
        "",
        description="App-level token (`xapp-…`, scope `connections:write`): the hub opens a "
        "Socket Mode connection to Slack and needs no public URL. Empty: Slack posts to "
        "`{public_url}/slack/interactivity` and `/slack/events` instead.",
    )
    slack_signing_secret: str = Field(
        "",
        description="The Slack app's signing secret: requests Slack posts to the hub must "
        "carry its `v0` signature, at most 5 minutes old. Needed without an app token.",
    )
    slack_api_url: str = Field(
        "https://slack.com/api",
        description="Slack Web API root; the hub calls `{root}/{method}`.",
    )
    a2a_enabled: bool = Field(False, description="Enable the A2A connector for remote agents.")
    a2a_pinned: list[PinnedRemoteAgent] = Field(
        [],
        description="Remote A2A agents pinned for people, as JSON: "
        '`[{"url": "https://agent.example", "workspace": "ws_…", "secret": "…"}]` '
        "(empty workspace: every workspace). Only pinned or added agents are ever listed.",
    )
    a2a_poll_interval_s: float = Field(
        1.0,
        gt=0,
        description="First delay between `GetTask` polls of a remote agent that does not "
        "stream; it doubles while nothing changes, up to 64 times this and at most 30 s.",
    )
    a2a_push: bool = Field(
        True,
        description="Ask remote agents whose card offers push notifications to post each "
        "change to `{public_url}/a2a/push/{task}` instead of being polled; each post only "
        "makes the hub read the task at once. Turn off when remote agents cannot reach the "
        "hub's public URL.",
    )
    a2a_lease_s: float = Field(
        30.0,
        gt=0,
        description="How long a hub process keeps the right to drive a remote call without "
        "renewing it. With several processes on one database, a call whose process died is "
        "taken over by another after this long; keep it well above clock skew between hosts.",
    )
    outbox_lease_s: float = Field(
        120.0,
        gt=0,
        description="How long an outbox worker keeps the right to deliver a notification it "
        "claimed; each row's lease is renewed just before its delivery. With several "
        "processes on one database, a row whose worker died or fell behind is taken over "
        "after this long; keep it above the longest one delivery can take (SMTP: 15 s).",
    )
    push_contact: str = Field(
        "",
        description="How push services reach the hub's operator (VAPID's subject): a "
        "mailto: or https: URL. Empty: mailto: the email sender address.",
    )
    notify_after_s: float = Field(
        2.0,
        ge=0,
        le=300,
        description="Seconds a new card waits before it goes out by email, Telegram and the "
        "other outbox surfaces. A card answered sooner (in the terminal, on a page already "
        "open) sends nothing: the person has seen it.",
    )
    outbound_allow_private: bool = Field(
        False,
        description="Let outbound calls (A2A, webhooks) reach loopback and private addresses.",
    )
    mcp_wait_s: float = Field(
        120.0,
        gt=0,
        description="How long an MCP asking tool waits for a person before it returns a "
        "pending handle for `get_decision` (a call's `wait_seconds` overrides it).",
    )
    mcp_idle_s: float = Field(
        600.0,
        gt=0,
        description="An agent using MCP over HTTP (`/mcp/`) stays online this long after its "
        "client's last request ends.",
    )
    mcp_allowed_origins: str = Field(
        "",
        description="Web pages allowed to call `/mcp/` from a browser besides the hub's own "
        "(`LINEUP_PUBLIC_URL`), comma-separated origins such as `http://localhost:6274`. A "
        "request whose `Origin` is any other gets 403; one without `Origin` (not from a "
        "browser) is let through to the credential check.",
    )
    log_level: str = Field("INFO", description="Python logging level.")
    log_format: Literal["text", "json"] = Field(
        "text",
        description="`text`: lines for a terminal. `json`: one object per line (`time`, "
        "`level`, `logger`, `message`, `requestId`) for a log collector.",
    )
    metrics_token: str = Field(
        "",
        description="Empty: `/metrics` is open to whoever reaches the hub. Set: a scraper "
        "must send `Authorization: Bearer <token>`.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = os.environ.get("LINEUP_CONFIG", "lineup.toml")
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if Path(config_file).is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        elif "LINEUP_CONFIG" in os.environ:
            raise ConfigurationError(f"LINEUP_CONFIG names {config_file!r}, which does not exist.")
        return tuple(sources)

    @field_validator("database_url")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        if value and not value.startswith(("sqlite://", "postgres://", "postgresql://")):
            raise ValueError("must start with sqlite://, postgres:// or postgresql://")
        return value

    @field_validator("secret_key")
    @classmethod
    def _long_enough(cls, value: str) -> str:
        if value and len(value) < 32:
            raise ValueError("must be at least 32 characters (try `openssl rand -hex 32`)")
        return value

    @field_validator("feishu_app_id")
    @classmethod
    def _feishu_app_id(cls, value: str) -> str:
        if value and not value.startswith("cli_"):
            raise ValueError("must be the app's App ID, which starts with cli_")
        return value

    @field_validator("feishu_app_secret", "feishu_verification_token")
    @classmethod
    def _feishu_pair(cls, value: str, info: Any) -> str:  # info: pydantic's ValidationInfo
        """Feishu needs the App ID, App Secret and Verification Token together."""
        app_id = info.data.get("feishu_app_id")
        if app_id and not value:
            where = {
                "feishu_app_secret": "the app's Credentials page",
                "feishu_verification_token": "Events & Callbacks → Encryption strategy",
            }[str(info.field_name)]
            raise ValueError(f"needed with LINEUP_FEISHU_APP_ID (see {where})")
        if value and not app_id and "feishu_app_id" in info.data:
            raise ValueError("set, but LINEUP_FEISHU_APP_ID is empty: set it too")
        return value

    @field_validator("feishu_api_url")
    @classmethod
    def _feishu_root(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
            raise ValueError(
                "must be the open platform's root, like https://open.feishu.cn or "
                "https://open.larksuite.com"
            )
        return value.rstrip("/")

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        if value.upper() not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
        return value.upper()

    @field_validator("slack_bot_token")
    @classmethod
    def _slack_bot_token(cls, value: str) -> str:
        if value and not value.startswith("xoxb-"):
            raise ValueError("must be a bot token, starting with xoxb- (OAuth & Permissions)")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _slack_app_token(cls, value: str) -> str:
        if value and not value.startswith("xapp-"):
            raise ValueError("must be an app-level token, starting with xapp- (Basic Information)")
        return value

    @field_validator("slack_signing_secret")
    @classmethod
    def _slack_signing_secret(cls, value: str) -> str:
        if value and not re.fullmatch(r"[0-9a-fA-F]{32,}", value):
            raise ValueError("must be the app's signing secret: 32 hexadecimal digits")
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _slack_api_url(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// (or http:// for a local server)")
        return value

    @model_validator(mode="after")
    def _slack_complete(self) -> Settings:
        """Slack needs its bot token and a way for presses to arrive; half a set-up is a
        mistake to name at start, not a channel that silently never answers."""
        if not self.slack_bot_token:
            if self.slack_app_token or self.slack_signing_secret:
                raise ValueError(
                    "LINEUP_SLACK_BOT_TOKEN is missing: Slack's other settings are set, "
                    "but the hub needs the bot token (xoxb-…) to send anything"
                )
        elif not (self.slack_app_token or self.slack_signing_secret):
            raise ValueError(
                "LINEUP_SLACK_APP_TOKEN (Socket Mode) or LINEUP_SLACK_SIGNING_SECRET "
                "(requests to /slack/interactivity) is missing: without one, presses in "
                "Slack never reach the hub"
            )
        return self

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite://{(self.data_dir / 'hub.sqlite3').resolve()}"

    @property
    def resolved_public_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def is_postgres(self) -> bool:
        return self.resolved_database_url.startswith(("postgres://", "postgresql://"))


def load_settings(*, hub_side: bool = True, **overrides: Any) -> Settings:
    """Read the settings, or fail with a message naming each wrong setting.

    ``hub_side=False`` (the agent commands, on an agent's machine) leaves an unset secret
    key unset instead of generating and storing one in the working directory.
    """
    try:
        settings = Settings(**overrides)
    except ValidationError as error:
        problems = "; ".join(_problem(e) for e in error.errors())
        raise ConfigurationError(f"Invalid settings: {problems}") from None
    if hub_side and not settings.secret_key:
        settings = settings.model_copy(update={"secret_key": _stored_secret_key(settings.data_dir)})
    return settings


def _problem(error: Any) -> str:
    """One wrong setting, named; a check across settings names them in its message."""
    if not error["loc"]:
        return str(error["msg"]).removeprefix("Value error, ")
    return f"LINEUP_{'_'.join(str(p) for p in error['loc']).upper()}: {error['msg']}"


def _stored_secret_key(data_dir: Path) -> str:
    """A key generated on first start and reused after, so `make run` needs no setup."""
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key


def settings_table() -> str:
    """The Markdown table of every setting, for the README."""
    rows = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        default = field.default
        shown = f"`{default}`" if default not in ("", None) else "(empty)"
        rows.append(f"| `LINEUP_{name.upper()}` | {shown} | {field.description} |")
    return "\n".join(rows)
