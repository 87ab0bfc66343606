// LineUp Hub's service worker (served as /service-worker.js, scope "/").
//
// 1. The app's shell: styles, scripts and icons are kept, so the installed app opens at
//    once, and the last inbox opened. Pages come from the hub when it answers; only when
//    it does not does the kept inbox show, and the page's live status then says the hub
//    is unreachable. Nothing but the shell and inbox pages is kept, and signing out
//    drops the pages.
// 2. Pushes (hub/channels/push): a card becomes a notification tagged with its id, so a
//    push sent again replaces it; its actions post the card's signed single-use links,
//    which decide that option only. A "close" push closes the card's notification.
"use strict";

const SHELL = "lineup-shell-SHELL_DIGEST"; // the digest is put in by /service-worker.js
const PAGES = "lineup-pages-v1";
// What it keeps: the offline page and the hub's files that hub/web/pages/pwa.py lists.
const SHELL_FILES = SHELL_FILES_LIST;
const INBOX = /^\/(w\/[^/]+\/inbox)?$/;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(SHELL_FILES)));
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n !== SHELL && n !== PAGES).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    event.respondWith(keptThenFresh(request));
  } else if (request.mode === "navigate") {
    event.respondWith(networkFirst(request, INBOX.test(url.pathname)));
  }
});

// The kept copy at once, refreshed behind it. The cache's name carries a digest of the
// shell's files (the hub puts it in when it serves this worker), so a hub whose files
// changed serves a new worker, which keeps the new files and drops the old.
async function keptThenFresh(request) {
  const cache = await caches.open(SHELL);
  const kept = await cache.match(request);
  const fresh = fetch(request)
    .then((response) => {
      if (response.ok) cache.put(request, response.clone());
      return response;
    })
    .catch(() => kept || Response.error());
  return kept || fresh;
}

async function networkFirst(request, keep) {
  try {
    const response = await fetch(request);
    // Only a page the hub served whole, to a signed-in person, is worth keeping.
    if (keep && response.ok && !response.redirected) {
      const cache = await caches.open(PAGES);
      await cache.put(request, response.clone());
    }
    return response;
  } catch (unreachable) {
    return (await keptPage(request, keep)) || (await caches.match("/offline")) || Response.error();
  }
}

async function keptPage(request, isInbox) {
  const pages = await caches.open(PAGES);
  const same = await pages.match(request);
  if (same || !isInbox) return same;
  // "/" redirects to the inbox when online; offline, the last inbox kept stands in.
  const kept = await pages.keys();
  return kept.length ? pages.match(kept[kept.length - 1]) : null;
}

self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "signed-out") {
    event.waitUntil(caches.delete(PAGES));
  }
});

// --- pushes -----------------------------------------------------------------------------

self.addEventListener("push", (event) => {
  let message = null;
  try {
    message = event.data ? event.data.json() : null;
  } catch (notJson) {
    message = null;
  }
  if (!message) return;
  event.waitUntil(show(message));
});

async function show(message) {
  if (message.type === "close") {
    const open = await self.registration.getNotifications({ tag: message.id });
    open.forEach((notification) => notification.close());
    return;
  }
  const actions = Array.isArray(message.actions) ? message.actions : [];
  const answers = {};
  actions.forEach((action) => {
    answers[action.action] = action.url;
  });
  const tag = message.type === "card" ? message.id : `notice:${message.id}`;
  await self.registration.showNotification(String(message.title || "LineUp"), {
    body: String(message.body || ""),
    tag,
    renotify: false, // a push sent again replaces its notification without a second buzz
    requireInteraction: message.risk === "high",
    icon: "/static/icons/icon-192.png",
    badge: "/static/icons/badge-96.png",
    data: { url: message.url, answers },
    actions: actions.map((action) => ({ action: action.action, title: String(action.title) })),
  });
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(handleClick(event.notification, event.action));
});

// What a tap does: on an action, post its link (the link is the credential: no session, no
// cookie); on the notification itself, or when the answer did not go through (decided
// elsewhere first, a link used, the hub away), open the card, which says why.
async function handleClick(notification, action) {
  const data = notification.data || {};
  notification.close();
  const link = action && data.answers ? data.answers[action] : null;
  if (link) {
    let response = null;
    try {
      response = await fetch(link, {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "",
      });
    } catch (unreachable) {
      response = null;
    }
    if (response && response.ok) return "decided";
  }
  await openCard(data.url);
  return "opened";
}

async function openCard(url) {
  if (!url) return;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const same = windows.find((client) => client.url === url);
  try {
    await (same ? same.focus() : self.clients.openWindow(url));
  } catch (notAllowed) {
    // Outside a tap a worker may not open windows; nothing more to do then.
  }
}
