// Page behaviour that needs no server: drawers, copy buttons, "sending" states, the time
// zone cookie, browser-notification preferences. Text comes from #ui-strings (translated
// on the server); agent text is never touched here.
"use strict";

const LineUp = (window.LineUp = window.LineUp || {});

LineUp.strings = (() => {
  const node = document.getElementById("ui-strings");
  try {
    return node ? JSON.parse(node.textContent) : {};
  } catch (_error) {
    return {};
  }
})();

LineUp.t = (key) => LineUp.strings[key] || key;

// Screen readers hear new things through one polite live region.
LineUp.announce = (text) => {
  const region = document.querySelector("[data-announcer]");
  if (!region) return;
  region.textContent = "";
  window.setTimeout(() => {
    region.textContent = text;
  }, 50);
};

// What this person wants to hear about in the browser right now (their preferences for the
// "web" surface, quiet hours and "only high-risk cards" included), as the server rendered
// it: "waiting" for a card of any risk, "waiting:high" for a high-risk card only.
LineUp.notifyPrefs = {
  get(kind, risk) {
    const shown = (document.body.dataset.notify || "").split(" ");
    return shown.includes(kind) || (risk === "high" && shown.includes(`${kind}:high`));
  },
};

function rememberTimeZone() {
  let zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch (_error) {
    return;
  }
  if (!zone) return;
  const current = document.cookie.split("; ").find((c) => c.startsWith("tz="));
  if (current !== `tz=${encodeURIComponent(zone)}`) {
    document.cookie = `tz=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;
  }
}

function setupToggles(root) {
  root.querySelectorAll("[data-toggle]").forEach((button) => {
    if (button.dataset.bound) return;
    button.dataset.bound = "1";
    button.addEventListener("click", () => {
      const target = document.getElementById(button.dataset.toggle);
      if (!target) return;
      const open = !target.classList.contains("open");
      target.classList.toggle("open", open);
      document
        .querySelectorAll(`[data-toggle="${button.dataset.toggle}"]`)
        .forEach((b) => b.setAttribute("aria-expanded", String(open)));
      if (open) {
        const first = target.querySelector("a, button, input, select, textarea, summary");
        if (first) first.focus();
      }
    });
  });
  root.querySelectorAll("[data-close]").forEach((button) => {
    if (button.dataset.bound) return;
    button.dataset.bound = "1";
    button.addEventListener("click", () => closePanel(button.dataset.close));
  });
}

function closePanel(id) {
  const target = document.getElementById(id);
  if (!target || !target.classList.contains("open")) return false;
  target.classList.remove("open");
  const opener = document.querySelector(`[data-toggle="${id}"]`);
  document
    .querySelectorAll(`[data-toggle="${id}"]`)
    .forEach((b) => b.setAttribute("aria-expanded", "false"));
  if (opener && opener.offsetParent !== null) opener.focus();
  return true;
}

function setupCopy(root) {
  root.querySelectorAll("[data-copy]").forEach((button) => {
    if (button.dataset.bound) return;
    button.dataset.bound = "1";
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent.trim());
      } catch (_error) {
        // No clipboard permission (plain http): select the text so Ctrl+C works.
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
      }
      button.textContent = LineUp.t("copied");
      LineUp.announce(LineUp.t("copied"));
      window.setTimeout(() => {
        button.textContent = LineUp.t("copy");
      }, 2000);
    });
  });
}

// A form shows that it is being sent and cannot be sent twice by a second press.
function setupSubmitStates() {
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || form.method.toLowerCase() !== "post") return;
    if (form.dataset.submitting) {
      event.preventDefault();
      return;
    }
    form.dataset.submitting = "1";
    const button = event.submitter;
    if (button) {
      button.setAttribute("aria-busy", "true");
      const note = document.createElement("span");
      note.className = "muted";
      note.setAttribute("role", "status");
      note.textContent = ` ${LineUp.t("sending")}`;
      button.insertAdjacentElement("afterend", note);
    }
  });
  // Returning through the back/forward cache: the form is usable again.
  window.addEventListener("pageshow", () => {
    document.querySelectorAll("form[data-submitting]").forEach((form) => {
      delete form.dataset.submitting;
    });
  });
}

// Browsers check the card's format (type, pattern, length) before sending; say why in the
// page's own language, next to the field.
function setupValidation() {
  document.addEventListener(
    "invalid",
    (event) => {
      const field = event.target;
      if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) return;
      field.setAttribute("aria-invalid", "true");
      const hintId = (field.getAttribute("aria-describedby") || "").split(" ")[0];
      const hint = hintId && document.getElementById(hintId);
      if (hint && !hint.dataset.flagged) {
        hint.dataset.flagged = "1";
        hint.classList.add("field-error");
        hint.textContent = `${LineUp.t("invalidInput")} ${hint.textContent}`;
      }
    },
    true,
  );
  document.addEventListener("input", (event) => {
    const field = event.target;
    if (field && field.getAttribute && field.getAttribute("aria-invalid") && field.checkValidity()) {
      field.removeAttribute("aria-invalid");
    }
  });
}

function setupNotifications(root) {
  const state = root.querySelector("[data-notification-state]");
  const describe = () => {
    if (!state || !("Notification" in window)) return;
    if (Notification.permission === "granted") state.textContent = LineUp.t("notificationsOn");
    if (Notification.permission === "denied") state.textContent = LineUp.t("notificationsBlocked");
  };
  describe();
  root.querySelectorAll("[data-enable-notifications]").forEach((button) => {
    if (button.dataset.bound) return;
    button.dataset.bound = "1";
    // Asked only when the person presses the button: a prompt on page load gets denied.
    const offer = "Notification" in window && Notification.permission === "default";
    const wanted = button.dataset.offer !== "no";
    button.hidden = !(offer && wanted);
    button.addEventListener("click", async () => {
      await Notification.requestPermission();
      button.hidden = Notification.permission !== "default";
      describe();
      if (Notification.permission === "granted") LineUp.announce(LineUp.t("notificationsOn"));
    });
  });
}

// Push (Settings → Push notifications): this browser subscribes with the hub's key and
// hands the subscription to the hub; the service worker shows what arrives.
function base64UrlBytes(text) {
  const padded = (text + "===".slice((text.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

async function turnPushOn(section, state) {
  if ((await Notification.requestPermission()) !== "granted") {
    state.textContent = LineUp.t("pushBlocked");
    return;
  }
  try {
    const registration = await navigator.serviceWorker.ready;
    const key = await fetch(section.dataset.publicKeyUrl, { credentials: "same-origin" }).then((r) => r.json());
    const subscription =
      (await registration.pushManager.getSubscription()) ||
      (await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64UrlBytes(key.publicKey),
      }));
    const device = section.querySelector("[data-push-device]");
    const sent = await fetch(section.dataset.subscriptionsUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...subscription.toJSON(), device: device ? device.value : "" }),
    });
    if (!sent.ok) {
      // The API speaks English; the page's own words for the refusal, by its code, if any.
      const refused = (await sent.json()).error;
      throw new Error((LineUp.strings.errors || {})[refused.code] || refused.message);
    }
    LineUp.announce(LineUp.t("pushOn"));
    window.location.reload();
  } catch (error) {
    state.textContent = `${LineUp.t("pushFailed")} ${error.message || error}`;
  }
}

function setupPush(root) {
  root.querySelectorAll("[data-push]").forEach((section) => {
    const button = section.querySelector("[data-push-on]");
    const state = section.querySelector("[data-push-state]");
    if (!button || button.dataset.bound) return;
    button.dataset.bound = "1";
    if (!("serviceWorker" in navigator && "PushManager" in window && "Notification" in window)) {
      state.textContent = LineUp.t("pushUnsupported");
      return;
    }
    button.hidden = false;
    button.addEventListener("click", () => turnPushOn(section, state));
  });
}

// The service worker keeps the app's shell for the installed app (static/service-worker.js);
// on the sign-in page, it forgets the pages it kept of the person who signed out.
function setupServiceWorker() {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register("/service-worker.js", { scope: "/" }).catch(() => {});
  if (window.location.pathname === "/login" && navigator.serviceWorker.controller) {
    navigator.serviceWorker.controller.postMessage({ type: "signed-out" });
  }
}

// A message box marked data-grow starts one line high and grows with what is typed, up to
// the height its CSS allows (then it scrolls).
function setupGrowingText(root) {
  root.querySelectorAll("textarea[data-grow]").forEach((field) => {
    if (field.dataset.bound) return;
    field.dataset.bound = "1";
    const fit = () => {
      const pinned = LineUp.thread.pinned();
      field.style.height = "auto";
      field.style.height = `${field.scrollHeight + 2}px`;
      if (pinned) LineUp.thread.toBottom();
    };
    field.addEventListener("input", fit);
    if (field.value) fit();
  });
}

// A conversation reads from its newest message: the page opens at the bottom of the thread
// and keeps to it while text streams in, unless the person scrolled up to read.
LineUp.thread = {
  atBottom() {
    const page = document.scrollingElement;
    return page.scrollHeight - page.scrollTop - page.clientHeight < 48;
  },
  toBottom() {
    const page = document.scrollingElement;
    page.scrollTop = page.scrollHeight;
  },
  // Whether the page shows a thread and the person is at its end (so follows what comes).
  pinned() {
    return Boolean(document.querySelector("[data-thread]")) && LineUp.thread.atBottom();
  },
};

function openAtNewest() {
  if (!document.querySelector("[data-thread]") || window.location.hash) return;
  LineUp.thread.toBottom();
  const placed = document.scrollingElement.scrollTop;
  // Late layout (fonts, the cards' details) can push the end down once more; a person who
  // scrolled meanwhile is left where they went.
  window.addEventListener(
    "load",
    () => {
      if (document.scrollingElement.scrollTop === placed) LineUp.thread.toBottom();
    },
    { once: true },
  );
}

// "Load earlier messages" fetches the earlier stretch of the conversation and puts it above
// the thread, the page held still on what the person was reading; without scripts the link
// opens that stretch as a page of its own.
function setupLoadEarlier() {
  const link = document.querySelector("[data-load-earlier]");
  const earlier = document.querySelector("[data-earlier]");
  if (!link || !earlier) return;
  link.addEventListener("click", async (event) => {
    event.preventDefault();
    if (link.dataset.loading) return;
    link.dataset.loading = "1";
    try {
      const response = await fetch(link.href, { credentials: "same-origin" });
      if (!response.ok) {
        window.location.href = link.href;
        return;
      }
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const fetched = doc.querySelector("[data-thread]");
      const page = document.scrollingElement;
      const below = page.scrollHeight - page.scrollTop;
      const items = fetched ? [...fetched.children].filter((item) => !item.matches("[data-empty]")) : [];
      earlier.prepend(...items.map((item) => document.importNode(item, true)));
      earlier.hidden = earlier.children.length === 0;
      const further = doc.querySelector("[data-load-earlier]");
      if (further) link.href = further.href;
      else link.remove();
      // Every change above the reader made, the page moves by what was added.
      page.scrollTop = page.scrollHeight - below;
      LineUp.enhance(earlier);
    } catch (_error) {
      window.location.href = link.href;
    } finally {
      delete link.dataset.loading;
    }
  });
}

// What a person is writing on a card (an answer, a comment, an edit of the action) survives
// a reload and the card being redrawn: kept per card in this tab's session storage until it
// is sent or the card closes. A sensitive answer (autocomplete off) is never kept.
const DRAFT_KEY = "lineup:draft:";

function draftFields(form) {
  return [...form.elements].filter(
    (field) =>
      field.name &&
      !field.hidden &&
      field.type !== "hidden" &&
      field.getAttribute("autocomplete") !== "off" &&
      (field instanceof HTMLTextAreaElement ||
        (field instanceof HTMLInputElement && !["checkbox", "radio", "submit", "password"].includes(field.type))),
  );
}

function cardOf(form) {
  const card = form.closest("[data-card]");
  return card && form.matches("[data-card-form]") ? card.dataset.card : null;
}

function saveDraft(form) {
  const card = cardOf(form);
  if (!card) return;
  const values = {};
  draftFields(form).forEach((field) => {
    if (field.value !== field.defaultValue) values[field.name] = field.value;
  });
  try {
    if (Object.keys(values).length) sessionStorage.setItem(DRAFT_KEY + card, JSON.stringify(values));
    else sessionStorage.removeItem(DRAFT_KEY + card);
  } catch (_error) {
    // Storage full or refused: the draft lives as long as the page, as before.
  }
}

function restoreDrafts(root) {
  root.querySelectorAll("[data-card]").forEach((card) => {
    const key = DRAFT_KEY + card.dataset.card;
    let stored = null;
    try {
      stored = JSON.parse(sessionStorage.getItem(key) || "null");
      if (card.dataset.cardStatus !== "pending") sessionStorage.removeItem(key);
    } catch (_error) {
      return;
    }
    const form = card.querySelector("form[data-card-form]");
    if (!stored || !form || card.dataset.cardStatus !== "pending") return;
    draftFields(form).forEach((field) => {
      if (field.name in stored && field.value === field.defaultValue) {
        field.value = stored[field.name];
        const folded = field.closest("details");
        if (folded) folded.open = true;
        // Marks the form as being written in, which live updates respect.
        field.dispatchEvent(new Event("input", { bubbles: true }));
      }
    });
  });
}

document.addEventListener("input", (event) => {
  const form = event.target && event.target.form;
  if (form && event.isTrusted) saveDraft(form);
});
document.addEventListener("submit", (event) => {
  const card = event.target instanceof HTMLFormElement && cardOf(event.target);
  if (!card) return;
  try {
    sessionStorage.removeItem(DRAFT_KEY + card);
  } catch (_error) {
    // nothing kept
  }
});

LineUp.enhance = (root) => {
  restoreDrafts(root);
  setupGrowingText(root);
  setupToggles(root);
  setupCopy(root);
  setupNotifications(root);
  setupPush(root);
};

document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") {
    closePanel("detail") || closePanel("sidebar");
  }
});

document.addEventListener("DOMContentLoaded", () => {
  setupServiceWorker();
  rememberTimeZone();
  setupSubmitStates();
  setupValidation();
  LineUp.enhance(document);
  openAtNewest();
  setupLoadEarlier();
  const focus = document.querySelector("[data-autofocus]");
  if (focus) focus.focus();
});
