"""The built-in Web Push channel (``lineup.channels`` entry point ``push``)."""

from importlib.util import find_spec

from hub.channels.registry import MissingExtra

# Only looked for here: pywebpush is imported with the first push (hub.channels.push.sender).
if find_spec("pywebpush") is None:
    raise MissingExtra("push", "push", "pywebpush")

from hub.channels.push.channel import PushChannel

__all__ = ["PushChannel"]
