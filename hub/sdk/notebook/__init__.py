"""The SDK in Jupyter: live widgets for a task an agent works in a notebook, and cards.

Needs the ``notebook`` extra (``pip install 'lineup-hub[notebook]'``: ipywidgets and
ipykernel ≥ 7.4, which serves widget clicks while a cell ``await``s). In a cell::

    agent = await Agent.connect(HUB, pairing_code="ABCD-EFGH", name="Data job")
    live(task)                                   # state, progress, the pending card
    decision = await task.request_approval(...)  # the cell waits; the panel follows
"""

from hub.sdk.notebook.cards import AnswerRefused, CardWidget, Respond
from hub.sdk.notebook.panel import TaskPanel, live

__all__ = ["AnswerRefused", "CardWidget", "Respond", "TaskPanel", "live"]
