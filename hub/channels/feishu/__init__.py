"""The built-in Feishu/Lark channel (``lineup.channels`` entry point ``feishu``)."""

from importlib.util import find_spec

from hub.channels.registry import MissingExtra

# Only looked for here: importing lark-oapi takes seconds, paid once the channel is built.
if find_spec("lark_oapi") is None:
    raise MissingExtra("feishu", "feishu", "lark-oapi")

from hub.channels.feishu.channel import FeishuChannel

__all__ = ["FeishuChannel"]
