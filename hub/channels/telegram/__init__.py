"""The built-in Telegram channel (``lineup.channels`` entry point ``telegram``)."""

from hub.channels.registry import MissingExtra

try:
    import telegram  # noqa: F401 - only to say which extra is missing, before anything else
except ImportError as missing:
    raise MissingExtra("telegram", "telegram", "python-telegram-bot") from missing

from hub.channels.telegram.channel import TelegramChannel

__all__ = ["TelegramChannel"]
