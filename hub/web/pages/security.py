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


def harden(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("X-Frame-Options", "DENY")
    if response.mimetype == "text/html":
        # Pages show private state; a shared computer's back button must not replay them.
        response.headers.setdefault("Cache-Control", "no-store")
    return response
