"""Response headers that keep agent-supplied text inert in the browser.

Agent content is escaped by Jinja and set with ``textContent`` in JavaScript; the
Content-Security-Policy is the second wall: no inline script, no script from elsewhere, no
plugin, no framing, forms only to this site. Should an escaping bug ever let markup
through, it still cannot run or phone home.
"""

from __future__ import annotations

from quart import Response

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "manifest-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)


# Every response of the hub carries these, whatever serves it (Quart, or an ASGI app mounted
# beside it: see hub.web.security_headers).
HARDENING_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


def harden(response: Response) -> Response:
    for name, value in HARDENING_HEADERS.items():
        response.headers.setdefault(name, value)
    if response.mimetype == "text/html":
        # Pages show private state; a shared computer's back button must not replay them.
        response.headers.setdefault("Cache-Control", "no-store")
    return response
