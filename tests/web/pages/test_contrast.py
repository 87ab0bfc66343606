"""Every text/background pair of the design tokens has a contrast of at least 4.5:1 (WCAG AA),
in the light theme and in the dark one.

The pairs are read from tokens.css by name: each text token (``--text-*`` and the
``--status-*-text`` shades) on each surface (``--surface-*``), plus the words on filled
buttons (``--text-on-brand`` on ``--brand``, ``--text-on-danger`` on ``--status-danger``).
The light values are the first ``:root`` block; the dark ones are the ``:root`` inside
``@media (prefers-color-scheme: dark)``.
"""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

TOKENS = Path(__file__).resolve().parents[3] / "hub" / "web" / "static" / "tokens.css"
ON_FILL = {"--text-on-brand": "--brand", "--text-on-danger": "--status-danger"}


THEMES = ("light", "dark")
_COLOUR = re.compile(r"(--[a-z0-9-]+):\s*(#[0-9a-fA-F]{6})\s*;")


def tokens(theme: str = "light") -> dict[str, str]:
    css = TOKENS.read_text()
    dark = re.search(r"@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{([^}]*)\}", css)
    assert dark is not None, "tokens.css has no dark theme"
    if theme == "dark":
        return dict(_COLOUR.findall(dark.group(1)))
    return dict(_COLOUR.findall(css[: dark.start()]))


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
    names = tokens("light")
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


def test_the_dark_theme_gives_every_colour_a_value() -> None:
    assert set(tokens("dark")) == set(tokens("light"))


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize(("text", "background"), pairs())
def test_text_on_background_reaches_4_5_to_1(theme: str, text: str, background: str) -> None:
    names = tokens(theme)
    ratio = contrast(names[text], names[background])
    assert ratio >= 4.5, f"{theme}: {text} on {background}: {ratio:.2f}:1"
