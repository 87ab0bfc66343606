"""Calling Slack's Web API through slack-sdk's ``AsyncWebClient``, with its failures sorted
for the outbox.

* HTTP 429 (``ratelimited``) is ``RetryLater`` with Slack's ``Retry-After``: the outbox
  tries the row again no sooner than Slack asked, instead of its own backoff.
* An error retrying cannot mend for this person (the conversation is gone or archived,
  their account deactivated) is ``DeliveryRefused``.
* Anything else — the API unreachable, a 5xx, a token Slack refuses until the operator
  fixes it — is transient: the row waits and is tried again, never lost.

``LINEUP_SLACK_API_URL`` is the API's root (a local server in the tests): the client calls
``{root}/{method}``.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError

from hub.core.notify.outbox import DeliveryRefused, RetryLater

# Errors that say this conversation or person cannot be reached again, whatever the wait.
PERMANENT = frozenset(
    {
        "channel_not_found",
        "is_archived",
        "not_in_channel",
        "user_not_found",
        "user_disabled",
        "account_inactive",
        "cannot_dm_bot",
        "messages_tab_disabled",
    }
)
DEFAULT_RETRY_AFTER_S = 30.0  # Slack's advice when a 429 carries no Retry-After


class SlackApi:
    """The hub's calls of the Web API; each returns the answer's data or raises as above."""

    def __init__(self, token: str, api_url: str, *, timeout_s: int = 10) -> None:
        # Here, not at the top: the client brings aiohttp, which a hub without Slack (its
        # module is imported all the same, to know the channel) has no use for.
        from slack_sdk.web.async_client import AsyncWebClient

        self.client = AsyncWebClient(
            token=token, base_url=api_url.rstrip("/") + "/", timeout=timeout_s
        )

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """``method`` (``chat_postMessage``, ...) of the client, errors sorted."""
        try:
            response = await getattr(self.client, method)(**params)
        except SlackApiError as error:
            raise _sorted(error) from error
        return dict(response.data) if isinstance(response.data, dict) else {}

    async def post_message(self, **message: Any) -> dict[str, Any]:
        """``chat.postMessage`` of text the hub escaped and blocks of plain text: nothing in
        it is parsed for names or links, nothing unfurled."""
        return await self.call(
            "chat_postMessage", unfurl_links=False, unfurl_media=False, parse="none", **message
        )

    async def update_message(self, channel: str, ts: str, text: str, blocks: list[Any]) -> None:
        await self.call(
            "chat_update", channel=channel, ts=ts, text=text, blocks=blocks, parse="none"
        )

    async def tell(self, channel: str, user: str, text: str) -> None:
        """An ephemeral message: only ``user`` sees it, in ``channel``, and it is not kept."""
        await self.call("chat_postEphemeral", channel=channel, user=user, text=text, parse="none")


def _sorted(error: SlackApiError) -> Exception:
    response = error.response
    code = str(response.get("error") or "") if response is not None else ""
    status = getattr(response, "status_code", 0)
    if status == 429 or code == "ratelimited":
        headers = getattr(response, "headers", {}) or {}
        after = _seconds(headers.get("Retry-After") or headers.get("retry-after"))
        return RetryLater(f"Slack asked to wait ({code or 429})", after)
    if code in PERMANENT:
        return DeliveryRefused(f"Slack refused: {code}")
    return error


def _seconds(value: Any) -> float:
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return DEFAULT_RETRY_AFTER_S


__all__ = ["PERMANENT", "SlackApi"]
