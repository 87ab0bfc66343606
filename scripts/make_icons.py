"""Draws the app's icons (hub/web/static/icons/*.png): a check mark on the brand colour.

Run once when the design changes (`python scripts/make_icons.py`); the PNGs are committed.
Pure standard library: a PNG is a zlib stream of rows, and the mark is two strokes whose
distance to each pixel sets its coverage (4×4 samples a pixel, so edges are smooth).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

BRAND = (0x35, 0x6A, 0xE6)  # --brand in hub/web/static/tokens.css
WHITE = (0xFF, 0xFF, 0xFF)
OUT = Path(__file__).resolve().parents[1] / "hub" / "web" / "static" / "icons"
SAMPLES = 4


def _segment_distance(
    px: float, py: float, a: tuple[float, float], b: tuple[float, float]
) -> float:
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return ((px - ax - t * dx) ** 2 + (py - ay - t * dy) ** 2) ** 0.5


def _inside_rounded(px: float, py: float, radius: float) -> bool:
    """Inside the unit square with corners rounded by ``radius``."""
    cx = min(max(px, radius), 1 - radius)
    cy = min(max(py, radius), 1 - radius)
    return (px - cx) ** 2 + (py - cy) ** 2 <= radius**2


def draw(size: int, *, rounded: bool, mark_scale: float) -> bytes:
    # The check, in unit coordinates around the centre, scaled to stay in the safe zone.
    points = [(-0.22, 0.02), (-0.06, 0.18), (0.24, -0.16)]
    stroke = [(0.5 + x * mark_scale, 0.5 + y * mark_scale) for x, y in points]
    half_width = 0.055 * mark_scale
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            background = mark = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    px = (x + (sx + 0.5) / SAMPLES) / size
                    py = (y + (sy + 0.5) / SAMPLES) / size
                    if rounded and not _inside_rounded(px, py, 0.2):
                        continue
                    background += 1
                    near = min(
                        _segment_distance(px, py, stroke[0], stroke[1]),
                        _segment_distance(px, py, stroke[1], stroke[2]),
                    )
                    mark += near <= half_width
            total = SAMPLES * SAMPLES
            colour = [
                round((b * (background - mark) + w * mark) / max(background, 1))
                for b, w in zip(BRAND, WHITE, strict=True)
            ]
            rows += bytes(colour) + bytes([round(255 * background / total)])
    return _png(size, bytes(rows))


def _png(size: int, rows: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for size in (192, 512):
        (OUT / f"icon-{size}.png").write_bytes(draw(size, rounded=True, mark_scale=1.0))
        # Maskable: full bleed, the mark inside the central 80 % a launcher may keep.
        (OUT / f"maskable-{size}.png").write_bytes(draw(size, rounded=False, mark_scale=0.8))
    (OUT / "apple-touch-icon.png").write_bytes(draw(180, rounded=False, mark_scale=0.9))
    (OUT / "badge-96.png").write_bytes(draw(96, rounded=True, mark_scale=1.0))


if __name__ == "__main__":
    main()
