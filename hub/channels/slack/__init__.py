"""The built-in Slack channel (``lineup.channels`` entry point ``slack``)."""

from hub.channels.registry import MissingExtra

try:
    import aiohttp  # noqa: F401 - slack-sdk's AsyncWebClient runs on it
    import slack_sdk  # noqa: F401 - only to say which extra is missing, before anything else
except ImportError as missing:
    raise MissingExtra("slack", "slack", "slack-sdk") from missing

from hub.channels.slack.channel import SlackChannel

__all__ = ["SlackChannel"]
