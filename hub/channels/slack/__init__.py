"""The built-in Slack channel (``lineup.channels`` entry point ``slack``)."""

from importlib.util import find_spec

from hub.channels.registry import MissingExtra

# Only looked for here (slack-sdk's AsyncWebClient runs on aiohttp): both are imported once
# the channel is built, so a hub without Slack does not load aiohttp.
if find_spec("slack_sdk") is None or find_spec("aiohttp") is None:
    raise MissingExtra("slack", "slack", "slack-sdk")

from hub.channels.slack.channel import SlackChannel

__all__ = ["SlackChannel"]
