"""The installable app's files as served: the manifest, the service worker, the offline page,
and Settings → Push notifications without script."""

from __future__ import annotations

import json
import re


async def test_the_manifest_names_the_app_its_icons_and_the_inbox(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response.mimetype == "application/manifest+json"
    manifest = json.loads(await response.get_data(as_text=True))
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert manifest["theme_color"] == "#356ae6"
    sizes = {(i["sizes"], i["purpose"]) for i in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= sizes
    for icon in manifest["icons"]:
        image = await ada.client.get(icon["src"])
        assert image.status_code == 200 and (await image.get_data())[:4] == b"\x89PNG"


async def test_the_service_worker_is_served_from_the_root_and_never_stale(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    response = await ada.client.get("/service-worker.js")
    assert response.status_code == 200 and response.mimetype == "text/javascript"
    assert "no-cache" in response.headers["Cache-Control"]
    source = await response.get_data(as_text=True)
    assert "notificationclick" in source
    # Its cache is named after the shell's files: changed files make a changed worker.
    assert "SHELL_DIGEST" not in source and re.search(r'"lineup-shell-[0-9a-f]{16}"', source)
    # It keeps the files the hub lists, each of which the hub serves.
    listed = re.search(r"const SHELL_FILES = (\[.*?\]);", source)
    assert listed is not None
    for path in json.loads(listed.group(1)):
        kept = await ada.client.get(path)
        assert kept.status_code == 200, path
    offline = await ada.client.get("/offline")
    assert "The hub cannot be reached" in await offline.get_data(as_text=True)


async def test_settings_lists_no_device_and_offers_push(browser) -> None:  # type: ignore[no-untyped-def]
    ada = await browser("Ada")
    _status, page = await ada.page(ada.w("/settings"))
    assert 'id="push-title"' in page and "No device has push on yet." in page
    assert "data-push-on" in page and 'rel="manifest"' in page
