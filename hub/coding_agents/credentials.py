"""Where ``lineup connect`` keeps a coding agent's hub address and credential.

One small JSON file per CLI (``coding-agents/claude-code.json``, ``codex.json``) in the
SDK's directory (``$LINEUP_AGENT_HOME``, else ``$XDG_CONFIG_HOME/lineup``, else
``~/.config/lineup``), mode 0600 since it holds a secret, replaced atomically. The hook
reads it on every call, so this uses ``os.path`` and reads the two fields it needs without
the ``json`` module (``plain_json``): ``pathlib``, ``dataclasses`` and ``json`` cost the
hook 50 ms of start-up between them.
"""

from __future__ import annotations

import os

from hub.coding_agents.plain_json import text_field


class Connection:
    __slots__ = ("agent_id", "credential", "hub", "workspace_id")

    def __init__(self, hub: str, credential: str, agent_id: str = "", workspace_id: str = ""):
        self.hub = hub
        self.credential = credential
        self.agent_id = agent_id
        self.workspace_id = workspace_id


def config_directory() -> str:
    # The same rule as hub.sdk.state.default_directory, which this must not import (the
    # SDK pulls in pydantic, a tenth of a second on every tool call).
    if os.environ.get("LINEUP_AGENT_HOME"):
        return os.environ["LINEUP_AGENT_HOME"]
    if os.environ.get("XDG_CONFIG_HOME"):
        return os.path.join(os.environ["XDG_CONFIG_HOME"], "lineup")
    return os.path.join(os.path.expanduser("~"), ".config", "lineup")


def connection_file(cli: str) -> str:
    return os.path.join(config_directory(), "coding-agents", f"{cli}.json")


def load(cli: str) -> Connection | None:
    """The CLI's connection, or None when it is not connected (or the file is unreadable)."""
    try:
        with open(connection_file(cli), "rb") as file:
            document = file.read()
    except OSError:
        return None
    hub = text_field(document, "hub")
    credential = text_field(document, "credential")
    if hub and credential:
        return Connection(hub, credential)
    import json  # only for a file someone wrote by hand

    try:
        data = json.loads(document)
        return Connection(
            hub=str(data["hub"]),
            credential=str(data["credential"]),
            agent_id=str(data.get("agentId") or ""),
            workspace_id=str(data.get("workspaceId") or ""),
        )
    except (ValueError, KeyError, TypeError):
        return None


def save(cli: str, connection: Connection) -> str:
    path = connection_file(cli)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temporary = path + ".tmp"
    body = {
        "hub": connection.hub,
        "credential": connection.credential,
        "agentId": connection.agent_id,
        "workspaceId": connection.workspace_id,
    }
    import json

    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(body, file, indent=2)
        file.write("\n")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return path


def remove(cli: str) -> bool:
    try:
        os.unlink(connection_file(cli))
    except FileNotFoundError:
        return False
    return True
