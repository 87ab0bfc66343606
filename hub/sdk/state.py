"""What an adapter must remember between runs, in one small JSON file per hub and profile.

The file holds the agent credential (so only the first run needs a pairing code), the log
position (``epoch`` and ``lastSequence``, sent back in ``agent.hello``), the sequences above
that position already handled, the answers people gave (so a restarted adapter finds a
decision that arrived before it stopped) and the uplinks not yet acknowledged (resent with
their original ids, which the hub deduplicates).

It lives in ``$LINEUP_AGENT_HOME``, else ``$XDG_CONFIG_HOME/lineup``, else
``~/.config/lineup``, is created with mode 0600 (it holds a secret) and replaced atomically,
so a crash mid-write leaves the previous version, never half a file. One running adapter per
file: two processes sharing a file would overwrite each other's position.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

STATE_VERSION = 1
# Answers are kept for restarts; the oldest go first past this many (a long-lived adapter
# must not grow its file without bound).
MAX_KEPT_RESOLUTIONS = 500


class AgentState(BaseModel):
    version: int = STATE_VERSION
    hub: str
    credential: str | None = None
    agent_id: str | None = None
    workspace_id: str | None = None
    epoch: str | None = None
    last_sequence: int = 0
    handled: list[int] = Field(default_factory=list)
    resolutions: dict[str, dict[str, Any]] = Field(default_factory=dict)
    outbox: list[dict[str, Any]] = Field(default_factory=list)

    def forget_log_position(self) -> None:
        """Another agent or another log: nothing remembered about the old one applies."""
        self.epoch = None
        self.last_sequence = 0
        self.handled = []
        self.resolutions = {}
        self.outbox = []

    def keep_resolution(self, interaction_id: str, resolution: dict[str, Any]) -> None:
        self.resolutions[interaction_id] = resolution
        while len(self.resolutions) > MAX_KEPT_RESOLUTIONS:
            del self.resolutions[next(iter(self.resolutions))]


def default_directory() -> Path:
    if os.environ.get("LINEUP_AGENT_HOME"):
        return Path(os.environ["LINEUP_AGENT_HOME"])
    if os.environ.get("XDG_CONFIG_HOME"):
        return Path(os.environ["XDG_CONFIG_HOME"]) / "lineup"
    return Path.home() / ".config" / "lineup"


def normalise_hub_url(hub: str) -> str:
    """``http(s)://host:port`` for any way of writing the hub's address (ws://, a path, ...)."""
    parts = urlsplit(hub if "://" in hub else f"http://{hub}")
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    if scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{hub!r} is not a hub address; use http://host:port or https://host")
    return f"{scheme}://{parts.netloc.lower()}"


def state_file_name(hub: str, profile: str) -> str:
    readable = re.sub(r"[^a-z0-9]+", "-", urlsplit(hub).netloc.lower()).strip("-")
    digest = hashlib.sha256(f"{hub}\n{profile}".encode()).hexdigest()[:10]
    safe_profile = re.sub(r"[^A-Za-z0-9_-]+", "-", profile)
    return f"agent-{readable}-{safe_profile}-{digest}.json"


class StateStore:
    """Loads and saves one ``AgentState`` file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def for_hub(
        cls, hub: str, profile: str = "default", directory: Path | None = None
    ) -> StateStore:
        hub = normalise_hub_url(hub)
        return cls((directory or default_directory()) / state_file_name(hub, profile))

    def load(self, hub: str) -> AgentState:
        hub = normalise_hub_url(hub)
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return AgentState(hub=hub)
        state = AgentState.model_validate(data)
        if state.hub != hub:
            # A file written for another hub: its credential and sequences mean nothing here.
            return AgentState(hub=hub)
        return state

    def save(self, state: AgentState) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(state.model_dump_json())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
