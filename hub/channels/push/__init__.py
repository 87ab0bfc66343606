"""The built-in Web Push channel (``lineup.channels`` entry point ``push``)."""

from hub.channels.registry import MissingExtra

try:
    import pywebpush  # noqa: F401 - only to say which extra is missing, before anything else
except ImportError as missing:
    raise MissingExtra("push", "push", "pywebpush") from missing

from hub.channels.push.channel import PushChannel

__all__ = ["PushChannel"]
