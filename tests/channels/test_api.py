"""The JSON API's notification preferences and Telegram linking."""

from __future__ import annotations

from tests.channels.conftest import PUBLIC_URL, eventually
from tests.channels.peers import BotApiPeer, SmtpPeer

ADA = 4242


async def test_preferences_read_and_change(make_hub, smtp: SmtpPeer) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        url = "/api/v1/me/notification-preferences"
        first = await (await hub.client.get(url, headers=hub.owner.headers)).get_json()
        assert first["surfaces"]["email"] == {"waiting": True, "failed": True}
        assert first["quietHours"] is None
        changed = await hub.client.put(
            url,
            json={
                "surfaces": {"email": {"waiting": False}},
                "quietHours": {"start": "22:00", "end": "07:00"},
                "timezone": "Asia/Shanghai",
                "language": "zh_Hans",
            },
            headers=hub.owner.headers,
        )
        body = await changed.get_json()
        assert changed.status_code == 200, body
        assert body["surfaces"]["email"] == {"waiting": False, "failed": True}
        assert body["quietHours"] == {"start": "22:00", "end": "07:00", "letHighRiskThrough": False}
        assert (body["timezone"], body["language"]) == ("Asia/Shanghai", "zh-Hans")
        wrong = await hub.client.put(
            url, json={"surfaces": {"pager": {"waiting": True}}}, headers=hub.owner.headers
        )
        assert wrong.status_code == 422
        assert (await wrong.get_json())["error"]["code"] == "unknown_surface"
        assert (await hub.client.get(url)).status_code == 401


async def test_a_deep_link_links_the_telegram_sender(make_hub, bot_api: BotApiPeer) -> None:
    async with make_hub(telegram_bot_token=bot_api.token, telegram_api_url=bot_api.url) as hub:
        answer = await hub.client.post(
            "/api/v1/me/channels/telegram/link", headers=hub.owner.headers
        )
        assert answer.status_code == 201
        link = await answer.get_json()
        assert link["url"] == f"https://t.me/lineup_test_bot?start={link['token']}"
        bot_api.send_text(ADA, f"/start {link['token']}")
        await eventually(lambda: any("Linked" in m.text for m in bot_api.chat(ADA)))
        linked = await (
            await hub.client.get("/api/v1/me/channels", headers=hub.owner.headers)
        ).get_json()
        assert [c["surface"] for c in linked["channels"]] == ["telegram"]
        # The token works once.
        bot_api.send_text(ADA + 1, f"/start {link['token']}")
        await eventually(lambda: any("invalid or expired" in m.text for m in bot_api.chat(ADA + 1)))


async def test_telegram_link_without_a_bot_says_how_to_set_it_up(make_hub) -> None:
    async with make_hub() as hub:
        answer = await hub.client.post(
            "/api/v1/me/channels/telegram/link", headers=hub.owner.headers
        )
        assert answer.status_code == 409
        assert "LINEUP_TELEGRAM_BOT_TOKEN" in (await answer.get_json())["error"]["hint"]


async def test_the_bot_says_where_to_make_a_link(make_hub, bot_api: BotApiPeer) -> None:
    settings = {"telegram_bot_token": bot_api.token, "telegram_api_url": bot_api.url}
    async with make_hub(**settings):
        where = f"{PUBLIC_URL}/settings#telegram"
        bot_api.send_text(ADA, "/start")
        await eventually(lambda: any(where in m.text for m in bot_api.chat(ADA)))
        bot_api.send_text(ADA + 1, "/start not-a-token")
        await eventually(
            lambda: any(
                "invalid or expired" in m.text and where in m.text for m in bot_api.chat(ADA + 1)
            )
        )


async def test_only_high_risk_and_quiet_hours_override_read_and_change(
    make_hub, smtp: SmtpPeer
) -> None:
    async with make_hub(smtp_url=smtp.url) as hub:
        url = "/api/v1/me/notification-preferences"
        first = await (await hub.client.get(url, headers=hub.owner.headers)).get_json()
        assert first["onlyHighRisk"] is False
        assert first["surfacesNotSetUp"] == ["feishu", "slack", "telegram"]  # none set up here
        changed = await hub.client.put(
            url,
            json={
                "onlyHighRisk": True,
                "quietHours": {"start": "22:00", "end": "07:00", "letHighRiskThrough": True},
            },
            headers=hub.owner.headers,
        )
        body = await changed.get_json()
        assert changed.status_code == 200, body
        assert body["onlyHighRisk"] is True
        assert body["quietHours"] == {"start": "22:00", "end": "07:00", "letHighRiskThrough": True}
        # Left out, the override keeps its value.
        kept = await hub.client.put(
            url, json={"quietHours": {"start": "23:00", "end": "06:00"}}, headers=hub.owner.headers
        )
        assert (await kept.get_json())["quietHours"]["letHighRiskThrough"] is True

        for wrong, status, code in (
            ({"onlyHighRisk": "yes"}, 422, "invalid_input"),
            (
                {"quietHours": {"start": "22:00", "end": "07:00", "letHighRiskThrough": 1}},
                422,
                "invalid_input",
            ),
            (
                {"onlyHighRisk": False, "surfaces": {"telegram": {"waiting": True}}},
                409,
                "surface_not_set_up",
            ),
        ):
            refused = await hub.client.put(url, json=wrong, headers=hub.owner.headers)
            error = (await refused.get_json())["error"]
            assert (refused.status_code, error["code"]) == (status, code), error
        after = await (await hub.client.get(url, headers=hub.owner.headers)).get_json()
        assert after["onlyHighRisk"] is True  # no refused change changed anything
        assert after["quietHours"] == {"start": "23:00", "end": "06:00", "letHighRiskThrough": True}
