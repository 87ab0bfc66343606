"""Artifacts a remote streams in chunks, put back together before the hub keeps them.

A2A lets a remote send one artifact in pieces: ``TaskArtifactUpdateEvent`` with
``append: true`` adds its parts to the artifact of the same id, and ``lastChunk: true``
marks the end. The hub logs an artifact once (its event id comes from the remote's artifact
id), so logging the first piece would keep only that piece. ``ChunkedArtifacts`` holds the
pieces of one stream until the last one and hands over the whole artifact.

On the wire a first piece looks exactly like a whole artifact (``append`` and ``lastChunk``
both false, and protobuf does not tell "false" from "not sent"), so an artifact without
``lastChunk`` is held until the stream pauses or ends (the task finishes or needs a person);
``remaining`` then hands over what is held. A stream resumed after a restart starts with
the whole task, whose artifacts the remote has put together so far: ``hold`` takes them as
the pieces later chunks append to.

The remote decides how much it sends, so what is held is bounded: text up to
``MAX_ARTIFACT_CHARS`` (more is dropped; the shown text ends "[truncated]"), at most
``MAX_PARTS`` parts each, and at most ``MAX_OPEN_ARTIFACTS`` artifacts at once (one more is
handed over as it stands).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plugins.a2a_connector import untrusted

MAX_ARTIFACT_CHARS = untrusted.ARTIFACT_TEXT_LIMIT
MAX_PARTS = 1000
MAX_OPEN_ARTIFACTS = 20


@dataclass
class _Held:
    artifact: dict[str, Any]
    parts: list[Any] = field(default_factory=list)
    chars: int = 0

    def add(self, parts: Any) -> None:
        for part in parts if isinstance(parts, list) else []:
            if len(self.parts) >= MAX_PARTS or self.chars > MAX_ARTIFACT_CHARS:
                return
            text = part.get("text") if isinstance(part, dict) else None
            self.chars += len(text) if isinstance(text, str) else 0
            self.parts.append(part)

    def whole(self) -> dict[str, Any]:
        return {**self.artifact, "parts": self.parts}


class ChunkedArtifacts:
    """The artifact pieces of one stream; ``update`` returns an artifact once it is whole."""

    def __init__(self) -> None:
        self._held: dict[str, _Held] = {}

    def update(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Take one artifact update; the whole artifact when its last piece came."""
        artifact = event.get("artifact")
        if not isinstance(artifact, dict):
            return None
        key = untrusted.identifier(artifact.get("artifactId"))
        if key is None:
            return artifact  # no id to join pieces by: it stands alone
        held = self._held.get(key)
        if held is None or not untrusted.flag(event.get("append")):
            held = _Held({k: v for k, v in artifact.items() if k != "parts"})
            if key not in self._held and len(self._held) >= MAX_OPEN_ARTIFACTS:
                held.add(artifact.get("parts"))
                return held.whole()
            self._held[key] = held
        held.add(artifact.get("parts"))
        if untrusted.flag(event.get("lastChunk")):
            del self._held[key]
            return held.whole()
        return None

    def hold(self, artifact: Any) -> dict[str, Any] | None:
        """Hold ``artifact`` (from a snapshot of the task) for pieces still to come."""
        if not isinstance(artifact, dict):
            return None
        return self.update({"artifact": artifact})

    def remaining(self) -> list[dict[str, Any]]:
        """Every artifact held, as it stands; nothing is held afterwards."""
        pieces = [held.whole() for held in self._held.values()]
        self._held.clear()
        return pieces


__all__ = ["MAX_ARTIFACT_CHARS", "ChunkedArtifacts"]
