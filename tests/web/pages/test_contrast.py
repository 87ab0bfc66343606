"""Every text/background pair of the design tokens has a contrast of at least 4.5:1 (WCAG AA).

The pairs are read from tokens.css by name: each text token (``--text-*`` and the
``--status-*-text`` shades) on each surface (``--surface-*``), plus the words on filled
buttons (``--text-on-brand`` on ``--brand``, ``--text-on-danger`` on ``--status-danger``).
"""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

TOKENS = Path(__file__).resolve().parents[3] / "hub" / "web" / "static" / "tokens.css"
ON_FILL = {"--text-on-brand": "--brand", "--text-on-danger": "--status-danger"}


def tokens() -> dict[str, str]:
    return dict(re.findall(r"(--[a-z0-9-]+):\s*(#[0-9a-fA-F]{6})\s*;", TOKENS.read_text()))


def luminance(colour: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def pairs() -> list[tuple[str, str]]:
    names = tokens()
    texts = [
        n
        for n in names
        if (n.startswith("--text-") and n not in ON_FILL) or re.fullmatch(r"--status-\w+-text", n)
    ]
    surfaces = [n for n in names if n.startswith("--surface-")]
    return [*product(texts, surfaces), *ON_FILL.items()]


def test_the_spec_tokens_are_all_there() -> None:
    spec = ["--surface-canvas", "--surface-default", "--surface-subtle", "--text-primary",
            "--text-secondary", "--border-subtle", "--brand", "--status-running",
            "--status-waiting", "--status-success", "--status-danger"]  # fmt: skip
    assert set(spec) <= set(tokens())
    assert len(pairs()) >= 20


@pytest.mark.parametrize(("text", "background"), pairs())
def test_text_on_background_reaches_4_5_to_1(text: str, background: str) -> None:
    names = tokens()
    ratio = contrast(names[text], names[background])
    assert ratio >= 4.5, f"{text} on {background}: {ratio:.2f}:1"
