// Settings → Telegram, Slack, Feishu: while a one-time link or code is shown, ask the hub
// every 1.5 s whether the person's account on that platform is linked yet, and say so
// without a reload. It stops when the code expires or the account appears. Without this
// script a reload shows the same. Each section names its platform (data-surface).
// The name is the platform's (the person's own choice): set as text, never as markup.
"use strict";

(() => {
  const POLL_MS = 1500;

  const watch = (section) => {
    const pending = section.querySelector("[data-link-pending]");
    const linked = section.querySelector("[data-link-linked]");
    const surface = section.dataset.surface;
    if (!pending || !linked || !surface) return;
    const expiresAt = Date.parse(pending.dataset.expiresAt || "");
    const url = pending.dataset.channelsUrl;
    if (!url || Number.isNaN(expiresAt)) return;

    const show = (account) => {
      const name = linked.querySelector("[data-link-name]");
      if (name) name.textContent = account.displayName || section.dataset.surfaceName || "";
      pending.hidden = true;
      const again = section.querySelector("[data-link-form]");
      if (again) again.hidden = true;
      linked.hidden = false;
      if (window.LineUp && window.LineUp.announce) {
        window.LineUp.announce(linked.querySelector("[role=status]").textContent);
      }
    };

    const ask = async () => {
      if (Date.now() > expiresAt) return; // the code no longer works: nothing will come
      try {
        const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
        if (response.ok) {
          const body = await response.json();
          const account = (body.channels || []).find((c) => c.surface === surface);
          if (account) {
            show(account);
            return;
          }
        }
      } catch (_error) {
        // The hub is briefly away: the next round asks again.
      }
      window.setTimeout(ask, POLL_MS);
    };
    window.setTimeout(ask, POLL_MS);
  };

  document.querySelectorAll("[data-link-section]").forEach(watch);
})();
