// The inbox as a list and a detail: a row opens its card beside the list (or as its own
// view on a narrow screen) without reloading the page, so drafts elsewhere and the live
// socket stay; keyboard triage (j/k, Enter, 1–9, Esc, ?); rows that arrived live say "new"
// until looked at; ages and countdowns stay current.
"use strict";

(() => {
  const LineUp = window.LineUp;
  const inbox = document.querySelector("[data-inbox]");
  if (!inbox) return;

  const seen = new Set(rowIds());
  const fresh = new Set();

  function rowIds() {
    return [...document.querySelectorAll("[data-live='inbox-list'] [data-row]")].map(
      (row) => row.dataset.row,
    );
  }

  function detail() {
    return document.querySelector("[data-live='inbox-detail']");
  }

  function shownCard() {
    const region = detail();
    return region ? region.dataset.selected || "" : "";
  }

  // A live redraw keeps the card that is open, even once it is decided elsewhere: it turns
  // read-only in place and says who decided, rather than giving way to the next one.
  LineUp.liveUrl = () => {
    const url = new URL(window.location.href);
    const card = shownCard();
    if (card && !url.searchParams.get("card")) url.searchParams.set("card", card);
    return url.toString();
  };

  function markNew() {
    const label = LineUp.t("new");
    document.querySelectorAll("[data-live='inbox-list'] [data-row]").forEach((row) => {
      const id = row.dataset.row;
      if (!seen.has(id)) {
        seen.add(id);
        fresh.add(id);
      }
      if (!fresh.has(id) || row.querySelector(".new-mark")) return;
      row.classList.add("is-new");
      const mark = document.createElement("span");
      mark.className = "new-mark";
      mark.textContent = label;
      const title = row.querySelector(".row-title");
      if (title) title.prepend(mark);
    });
  }

  function markSelected(id) {
    document.querySelectorAll("[data-live='inbox-list'] [data-row]").forEach((row) => {
      const on = row.dataset.row === id;
      row.classList.toggle("selected", on);
      const link = row.querySelector("[data-select-card]");
      if (link) {
        if (on) link.setAttribute("aria-current", "true");
        else link.removeAttribute("aria-current");
      }
    });
    fresh.delete(id);
    const row = document.querySelector(`[data-live='inbox-list'] [data-row="${CSS.escape(id)}"]`);
    if (row) {
      row.classList.remove("is-new");
      const mark = row.querySelector(".new-mark");
      if (mark) mark.remove();
    }
  }

  const wide = () => window.matchMedia("(min-width: 1024px)").matches;

  async function open(href, { push = true, focusCard = !wide() } = {}) {
    let response;
    try {
      response = await fetch(href, { credentials: "same-origin", headers: { "X-Live-Refresh": "1" } });
    } catch (_error) {
      window.location.href = href;
      return;
    }
    if (!response.ok || response.redirected) {
      window.location.href = href;
      return;
    }
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const incoming = doc.querySelector("[data-live='inbox-detail']");
    const current = detail();
    if (!incoming || !current) return;
    const replacement = document.importNode(incoming, true);
    current.replaceWith(replacement);
    LineUp.enhance(replacement);
    if (push) window.history.pushState({ inbox: true }, "", href);
    const chosen = new URL(href, window.location.href).searchParams.get("card");
    inbox.toggleAttribute("data-chosen", Boolean(chosen));
    markSelected(replacement.dataset.selected || "");
    if (focusCard) {
      const title = replacement.querySelector(".card h3");
      if (title) {
        title.setAttribute("tabindex", "-1");
        title.focus();
      }
    }
  }

  function back() {
    const link = detail() && detail().querySelector("[data-back]");
    if (wide() || !inbox.hasAttribute("data-chosen") || !link) return false;
    const id = shownCard();
    open(link.href, { focusCard: false }).then(() => {
      const row = document.querySelector(`[data-row="${CSS.escape(id)}"] .row-main`);
      if (row) row.focus();
    });
    return true;
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("[data-select-card], [data-back]");
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (link.hasAttribute("data-back")) back();
    else open(link.href);
  });

  window.addEventListener("popstate", () => open(window.location.href, { push: false }));

  // Filters apply as they change; the button stays for a browser without scripts.
  const filters = document.querySelector("[data-filters]");
  if (filters) {
    const submit = filters.querySelector("[data-filter-submit]");
    if (submit) submit.hidden = true;
    filters.addEventListener("change", () => filters.requestSubmit());
  }

  function typing(target) {
    return target && target.closest && target.closest("input, textarea, select, [contenteditable]");
  }

  function moveRow(step) {
    const links = [...document.querySelectorAll("[data-live='inbox-list'] .row-main")];
    if (!links.length) return;
    const at = links.indexOf(document.activeElement);
    let next = at === -1 ? (step > 0 ? 0 : links.length - 1) : at + step;
    next = Math.max(0, Math.min(links.length - 1, next));
    links[next].focus();
    links[next].scrollIntoView({ block: "nearest" });
  }

  function chooseOption(n) {
    const card = detail() && detail().querySelector("[data-card][data-card-status='pending']");
    if (!card || (!wide() && !inbox.hasAttribute("data-chosen"))) return false;
    const checks = card.querySelectorAll(".choice-list input[type=checkbox]");
    if (checks.length) {
      if (!checks[n - 1]) return false;
      checks[n - 1].checked = !checks[n - 1].checked;
      checks[n - 1].focus();
      return true;
    }
    const buttons = card.querySelectorAll(".options button[name=optionId]");
    if (!buttons[n - 1]) return false;
    buttons[n - 1].click();
    return true;
  }

  const sheet = document.getElementById("shortcuts");
  const showSheet = () => sheet && !sheet.open && sheet.showModal();
  document.querySelectorAll("[data-shortcuts]").forEach((b) => b.addEventListener("click", showSheet));

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.metaKey || event.ctrlKey || event.altKey) return;
    if (typing(event.target) || (sheet && sheet.open)) return;
    const key = event.key;
    if (key === "j" || key === "k") {
      moveRow(key === "j" ? 1 : -1);
    } else if (key === "?") {
      showSheet();
    } else if (key === "Escape") {
      if (!back()) return;
    } else if (/^[1-9]$/.test(key)) {
      if (!chooseOption(Number(key))) return;
    } else {
      return;
    }
    event.preventDefault();
  });

  // "3 minutes ago", "in 12 minutes": kept current in the page's language.
  const language = document.documentElement.lang || "en";
  const format = "RelativeTimeFormat" in Intl ? new Intl.RelativeTimeFormat(language, { numeric: "auto" }) : null;
  const units = [
    ["day", 86400],
    ["hour", 3600],
    ["minute", 60],
    ["second", 1],
  ];
  function relative(at) {
    const seconds = (at - Date.now()) / 1000;
    for (const [unit, size] of units) {
      if (Math.abs(seconds) >= size * 1.5 || unit === "second") {
        return format.format(Math.round(seconds / size), unit);
      }
    }
    return "";
  }
  function tick() {
    if (!format) return;
    document.querySelectorAll("time[data-relative]").forEach((time) => {
      const at = Date.parse(time.getAttribute("datetime") || "");
      if (!Number.isNaN(at)) time.textContent = relative(at);
    });
  }
  window.setInterval(tick, 15000);

  document.addEventListener("lineup:swapped", () => {
    markNew();
    markSelected(shownCard());
    tick();
  });
})();
