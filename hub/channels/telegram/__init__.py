"""The built-in Telegram channel (``lineup.channels`` entry point ``telegram``)."""

from hub.channels.telegram.channel import TelegramChannel

__all__ = ["TelegramChannel"]
