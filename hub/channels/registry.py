"""Finding channels: every channel, built-in or third-party, is an entry point.

The group is ``lineup.channels``; each entry point names a ``Channel`` subclass, e.g. in a
plugin's ``pyproject.toml``::

    [project.entry-points."lineup.channels"]
    webhook = "lineup_webhook_channel:WebhookChannel"

The hub's own email and Telegram channels are registered in the hub's ``pyproject.toml``
in exactly this way, so the plugin path is the path the built-ins take every day.

A channel whose optional dependency is missing fails to load with ``MissingExtra``, which
says what to install; discovery reports it and carries on with the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from hub.channels.base import Channel
from hub.core.errors import ConfigurationError

logger = logging.getLogger(__name__)

GROUP = "lineup.channels"


class MissingExtra(ConfigurationError):
    """A channel needs a package that is not installed."""

    code = "channel_dependency_missing"

    def __init__(self, channel: str, extra: str, package: str) -> None:
        super().__init__(
            f"The {channel} channel needs the {package!r} package.",
            hint=f"Install it with: pip install 'lineup-hub[{extra}]'",
        )
        self.channel = channel
        self.extra = extra


@dataclass(frozen=True, slots=True)
class Discovered:
    name: str
    entry_point: EntryPoint
    channel: type[Channel] | None
    error: Exception | None

    @property
    def distribution(self) -> str | None:
        dist = self.entry_point.dist
        return dist.name if dist is not None else None


def discover() -> dict[str, Discovered]:
    """Every channel registered in the group, loaded; a failure is kept, not raised."""
    found: dict[str, Discovered] = {}
    for entry_point in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if entry_point.name in found:
            logger.warning(
                "two packages register the channel %r; keeping the first", entry_point.name
            )
            continue
        try:
            loaded = entry_point.load()
            if not (isinstance(loaded, type) and issubclass(loaded, Channel)):
                raise TypeError(f"{entry_point.value} is not a Channel subclass")
            found[entry_point.name] = Discovered(entry_point.name, entry_point, loaded, None)
        except Exception as error:  # a broken plugin must not stop the hub
            logger.warning("channel %r could not be loaded: %s", entry_point.name, error)
            found[entry_point.name] = Discovered(entry_point.name, entry_point, None, error)
    return found


def available_channels() -> dict[str, type[Channel]]:
    """The channels that loaded, by name."""
    return {name: d.channel for name, d in discover().items() if d.channel is not None}


__all__ = ["GROUP", "Discovered", "MissingExtra", "available_channels", "discover"]
