"""The hub's WebSockets run uncompressed: permessage-deflate is declined at the handshake.

Hypercorn accepts permessage-deflate whenever a client offers it (browsers and the
``websockets`` library do by default) with zlib's largest settings and context takeover, so
each socket keeps a compressor and a decompressor for as long as it is open: about 300 KiB
allocated, much of it made resident by the first frames (zlib clears its 64 KiB hash
table). Declining it took an idle agent connection from 136 KiB to 41 KiB resident
(``benchmarks/RESULTS.md``), the same as a bare hypercorn socket. Every frame
sent is also compressed once per socket, which a fan-out to a thousand browsers pays a
thousand times. The hub's frames are short JSON envelopes that compress little, so the
trade goes the other way: frames travel as they are. (The SDK never offers compression.)

Hypercorn has no setting for this; its handshake builds ``PerMessageDeflate()`` by name, so
that name is pointed at an extension that declines every offer. A declined extension is
simply left out of the handshake answer, as RFC 7692 allows, and the client sends plain
frames.
"""

from __future__ import annotations

from wsproto.extensions import PerMessageDeflate


class DeclinedPerMessageDeflate(PerMessageDeflate):
    """permessage-deflate that answers every offer with "no"."""

    def accept(self, offer: str) -> None:
        return None


def decline_permessage_deflate() -> None:
    """Make hypercorn's WebSocket handshakes in this process decline compression."""
    from hypercorn.protocol import ws_stream

    ws_stream.PerMessageDeflate = DeclinedPerMessageDeflate  # type: ignore[attr-defined]


__all__ = ["DeclinedPerMessageDeflate", "decline_permessage_deflate"]
