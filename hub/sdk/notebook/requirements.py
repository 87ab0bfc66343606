"""The notebook packages, imported once, with a clear message when they are missing."""

from __future__ import annotations

from typing import Any

try:
    import ipywidgets  # type: ignore[import-untyped]
    from IPython import display as ipython_display
except ImportError as missing:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"Notebook widgets need {missing.name!r}: pip install 'lineup-hub[notebook]'"
    ) from missing

widgets: Any = ipywidgets
display: Any = ipython_display.display

__all__ = ["display", "widgets"]
