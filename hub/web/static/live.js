// One WebSocket per tab to /ws/client: the workspace's events after the sequence the page
// was rendered at, then live ones. Each event refreshes the page's live regions from the
// server (which renders and escapes them); streaming text is appended with textContent.
// After a drop or a sleeping tab it reconnects with the last sequence it handled, so the
// log replays exactly what was missed.
"use strict";

(() => {
  const LineUp = window.LineUp;
  const body = document.body;
  const workspace = body.dataset.workspace;
  if (!workspace) return;

  let lastSequence = Number(body.dataset.sequence || "0");
  let epoch = body.dataset.epoch || "";
  let socket = null;
  let retry = 0;
  let retryTimer = null;
  let hiddenSince = null;
  let refreshTimer = null;
  // Frames without a sequence that still change what a page shows (hub.core.agents.presence).
  const PRESENCE = new Set(["agent.online", "agent.offline"]);
  let refreshing = false;
  let refreshAgain = false;
  const dirtyForms = new WeakSet();

  const state = document.querySelector("[data-live-state]");
  const setState = (key) => {
    if (state) state.textContent = LineUp.t(key);
    body.dataset.live = key;
  };

  document.addEventListener("input", (event) => {
    if (event.target && event.target.form) dirtyForms.add(event.target.form);
  });

  function url() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const query = new URLSearchParams({ workspace, after: String(lastSequence) });
    if (epoch) query.set("epoch", epoch);
    return `${scheme}//${window.location.host}/ws/client?${query}`;
  }

  function connect() {
    window.clearTimeout(retryTimer);
    if (socket && socket.readyState <= WebSocket.OPEN) return;
    setState("connecting");
    const ws = new WebSocket(url());
    socket = ws;
    ws.addEventListener("message", (event) => {
      if (socket !== ws) return;
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch (_error) {
        return;
      }
      handle(frame);
    });
    ws.addEventListener("close", () => {
      if (socket !== ws) return;
      socket = null;
      setState("offline");
      const delay = Math.min(15000, 500 * 2 ** retry) * (0.75 + Math.random() / 2);
      retry += 1;
      retryTimer = window.setTimeout(connect, delay);
    });
  }

  function reconnectNow() {
    if (socket) {
      const old = socket;
      socket = null;
      old.close();
    }
    retry = 0;
    connect();
  }

  function handle(frame) {
    const type = frame.type;
    if (type === "client.welcome") {
      retry = 0;
      epoch = frame.payload.epoch || epoch;
      setState("live");
      return;
    }
    if (type === "error") {
      setState("offline");
      return;
    }
    if (type === "system.resync_required") {
      // Another log (restored backup) or a sequence it never had: redraw from the server.
      epoch = frame.payload.epoch || epoch;
      lastSequence = Number(frame.payload.lastSequence || 0);
      scheduleRefresh(0);
      return;
    }
    if (type === "message.delta") {
      streamDelta(frame);
      return;
    }
    const sequence = Number(frame.sequence || 0);
    if (!sequence && PRESENCE.has(type)) {
      // An idle agent came or went: state shown live, kept in no log (no sequence).
      scheduleRefresh(150);
      return;
    }
    if (!sequence || sequence <= lastSequence) return; // already shown
    lastSequence = sequence;
    tellPerson(frame);
    scheduleRefresh(150);
  }

  function streamDelta(frame) {
    const payload = frame.payload || {};
    const thread = document.querySelector("[data-thread]");
    const conversation = body.dataset.conversation;
    if (!thread || !payload.messageId || (conversation && payload.conversationId !== conversation)) {
      return;
    }
    const pinned = LineUp.thread.pinned(); // at the newest message: stay there as text comes
    let item = thread.querySelector(`[data-message="${CSS.escape(payload.messageId)}"]`);
    if (!item) {
      item = document.createElement("li");
      item.className = "message from-agent";
      item.dataset.message = payload.messageId;
      item.dataset.streaming = "1";
      const content = document.createElement("div");
      content.className = "agent-text";
      content.dataset.content = "";
      item.appendChild(content);
      const empty = thread.querySelector("[data-empty]");
      if (empty) empty.remove();
      thread.appendChild(item);
    }
    const content = item.querySelector("[data-content]");
    if (item.dataset.streaming && content) {
      content.textContent += String(payload.delta || "");
    }
    if (pinned) LineUp.thread.toBottom();
  }

  function isRecent(frame) {
    const at = Date.parse(frame.recordedAt || frame.occurredAt || "");
    return !Number.isNaN(at) && Date.now() - at < 5 * 60 * 1000;
  }

  function tellPerson(frame) {
    const payload = frame.payload || {};
    let kind = null;
    let risk = null;
    let title = "";
    let text = "";
    if (frame.type === "interaction.requested") {
      kind = "waiting";
      risk = (payload.interaction && payload.interaction.risk) || null;
      title = LineUp.t("waitingTitle");
      text = String((payload.interaction && payload.interaction.title) || "");
      LineUp.announce(`${LineUp.t("newWaiting")}: ${text}`);
    } else if (frame.type === "task.status_changed" && payload.status === "failed") {
      kind = "failed";
      title = LineUp.t("failedTitle");
      text = String(payload.error || payload.summary || "");
      LineUp.announce(`${title}: ${text}`);
    }
    if (!kind || !isRecent(frame) || !LineUp.notifyPrefs.get(kind, risk)) return;
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    if (document.visibilityState === "visible" && document.hasFocus()) return;
    // The card's title as the agent wrote it; never anything a person typed (spec §11).
    const notification = new Notification(title, { body: text.slice(0, 200), tag: frame.id });
    notification.addEventListener("click", () => window.focus());
  }

  function scheduleRefresh(delay) {
    window.clearTimeout(refreshTimer);
    refreshTimer = window.setTimeout(refresh, delay);
  }

  // Redraw each live region from a fresh server render. A card the person is answering
  // (focus in it, or a form they typed into) stays as it is while it is still open, the
  // rest of its region around it redrawn; once it is decided elsewhere, the decided card
  // replaces it. Any other form being filled in holds its region until the person leaves it.
  async function refresh() {
    if (body.hasAttribute("data-no-refresh")) return;
    if (refreshing) {
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      // A paged region names what its redraw fetches (a thread keeps its stretch).
      const named = document.querySelector("[data-live-url]");
      const own = named ? new URL(named.dataset.liveUrl, window.location.href).toString() : null;
      const address = LineUp.liveUrl ? LineUp.liveUrl() : own || window.location.href;
      const response = await fetch(address, {
        credentials: "same-origin",
        headers: { "X-Live-Refresh": "1" },
      });
      if (response.redirected || !response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      let deferred = false;
      const swap = (current, fresh) => {
        if (!current || !fresh || current.innerHTML === fresh.innerHTML) return;
        if (busyOutsideCards(current)) {
          deferred = true;
          return;
        }
        const replacement = document.importNode(fresh, true);
        const focus = rememberFocus(); // before a card moves: moving it takes the focus away
        keepAnswering(current, replacement);
        // Text still streaming is not stored yet: carry it over until its message is.
        current.querySelectorAll("[data-streaming]").forEach((item) => {
          const id = CSS.escape(item.dataset.message);
          const thread = replacement.querySelector("[data-thread]") || replacement;
          if (!replacement.querySelector(`[data-message="${id}"]`)) thread.appendChild(item);
        });
        // So do the earlier messages the person loaded, and the link to the ones before them.
        ["[data-earlier]", "[data-earlier-nav]"].forEach((selector) => {
          const kept = current.querySelector(selector);
          const slot = replacement.querySelector(selector);
          if (kept && slot) slot.replaceWith(kept);
        });
        // A toggle the person opened (the raw events, a full hash) stays open through a redraw.
        current.querySelectorAll("details[data-raw][open][id]").forEach((open) => {
          const again = replacement.querySelector(`#${CSS.escape(open.id)}`);
          if (again) again.open = true;
        });
        // So does a drawer the person opened (the detail pane, the folded sidebar).
        current.querySelectorAll(".open[id]").forEach((open) => {
          const again = replacement.querySelector(`#${CSS.escape(open.id)}`);
          if (again) again.classList.add("open");
          replacement
            .querySelectorAll(`[data-toggle="${CSS.escape(open.id)}"]`)
            .forEach((b) => b.setAttribute("aria-expanded", "true"));
        });
        current.replaceWith(replacement);
        focus();
        LineUp.enhance(replacement);
      };
      const pinned = LineUp.thread.pinned();
      const keys = (root) => [...root.querySelectorAll("[data-live]")].map((r) => r.dataset.live);
      const same = keys(doc).join(" ") === keys(document).join(" ");
      doc.querySelectorAll("[data-live]").forEach((fresh) => {
        // A region came or went (say, the first task of a conversation): the page body is
        // redrawn as a whole below; the regions outside it (the top bar) one by one.
        if (!same && fresh.closest(".layout")) return;
        const key = CSS.escape(fresh.getAttribute("data-live"));
        swap(document.querySelector(`[data-live="${key}"]`), fresh);
      });
      if (!same) swap(document.querySelector(".layout"), doc.querySelector(".layout"));
      if (pinned) LineUp.thread.toBottom();
      if (deferred) document.addEventListener("focusout", () => scheduleRefresh(300), { once: true });
      const sequence = doc.body.dataset.sequence;
      if (sequence) body.dataset.sequence = sequence;
      body.dataset.notify = doc.body.dataset.notify || "";
      document.dispatchEvent(new CustomEvent("lineup:swapped"));
    } catch (_error) {
      // Offline: the reconnect will bring a refresh with it.
    } finally {
      refreshing = false;
      if (refreshAgain) {
        refreshAgain = false;
        scheduleRefresh(100);
      }
    }
  }

  function editing(root) {
    const active = document.activeElement;
    if (active && active !== document.body && root.contains(active)) {
      if (active.matches("input, textarea, select")) return true;
    }
    return [...root.querySelectorAll("form")].some((form) => dirtyForms.has(form));
  }

  // A form outside any card that the person is filling in (settings, the composer).
  function busyOutsideCards(region) {
    const active = document.activeElement;
    if (active && region.contains(active) && active.matches("input, textarea, select")) {
      if (!active.closest("[data-card]")) return true;
    }
    return [...region.querySelectorAll("form")].some(
      (form) => dirtyForms.has(form) && !form.closest("[data-card]"),
    );
  }

  // The cards being answered move into the fresh render in place of their fresh copy, as
  // long as that copy is still open: the draft, the focus and the caret go with them.
  function keepAnswering(current, replacement) {
    current.querySelectorAll("[data-card]").forEach((card) => {
      if (!editing(card)) return;
      const id = CSS.escape(card.dataset.card);
      const copy = replacement.querySelector(`[data-card="${id}"]`);
      if (copy && copy.dataset.cardStatus === "pending") copy.replaceWith(card);
    });
  }

  function rememberFocus() {
    const active = document.activeElement;
    if (!active || active === document.body) return () => {};
    const range =
      typeof active.selectionStart === "number"
        ? [active.selectionStart, active.selectionEnd]
        : null;
    return () => {
      if (!active.isConnected || document.activeElement === active) return;
      active.focus({ preventScroll: true });
      if (range && active.setSelectionRange) {
        try {
          active.setSelectionRange(range[0], range[1]);
        } catch (_error) {
          // Not every input type has a caret (email, number).
        }
      }
    };
  }

  // A tab that slept may hold a socket that died silently: reconnect on wake and let the
  // log replay what happened meanwhile.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") {
      hiddenSince = Date.now();
      return;
    }
    const slept = hiddenSince !== null && Date.now() - hiddenSince > 20000;
    hiddenSince = null;
    if (slept || !socket || socket.readyState !== WebSocket.OPEN) reconnectNow();
  });
  window.addEventListener("online", reconnectNow);
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) {
      reconnectNow();
      scheduleRefresh(0);
    }
  });

  LineUp.live = { reconnectNow, refresh, get lastSequence() { return lastSequence; } };
  connect();
})();
