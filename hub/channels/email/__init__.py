"""The built-in email channel (``lineup.channels`` entry point ``email``)."""

from hub.channels.email.channel import EmailChannel

__all__ = ["EmailChannel"]
