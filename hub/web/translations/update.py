"""Refresh the catalogues: extract the strings, merge them into each language's .po file,
compile the .mo files the hub loads (committed, so a fresh clone runs as is).

One catalogue serves the web UI's pages and the channels' emails, Telegram messages and
link pages (``babel.cfg`` lists where their strings are). Run with ``make translations``
after changing a fixed string of any of them; then translate the new entries
(``msgstr ""``) in ``zh_Hans/LC_MESSAGES/messages.po`` and run it again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
LANGUAGES = ("zh_Hans",)


def pybabel(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "babel.messages.frontend", *args], check=True, cwd=ROOT)


def main() -> int:
    pot = HERE / "messages.pot"
    pybabel(
        "extract", "-F", str(HERE / "babel.cfg"), "-k", "_", "-k", "gettext",
        "-k", "ngettext:1,2", "--no-location", "--sort-output", "--omit-header",
        "-o", str(pot), ".",
    )  # fmt: skip
    for language in LANGUAGES:
        po = HERE / language / "LC_MESSAGES" / "messages.po"
        if po.exists():
            pybabel(
                "update", "-i", str(pot), "-d", str(HERE), "-l", language, "--no-fuzzy-matching"
            )
        else:
            pybabel("init", "-i", str(pot), "-d", str(HERE), "-l", language)
    pybabel("compile", "-d", str(HERE), "--statistics")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
