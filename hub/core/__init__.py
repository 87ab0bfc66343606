"""The domain, with no web framework: the event log and everything derived from it.

Rooms, from the bottom up (``docs/architecture.md`` draws them; ``make lint`` keeps the
arrows): ``store`` (tables, database, migrations), ``log`` (appending, the bus), ``people``,
``agents``, ``approvals`` and ``notify``, then ``work`` (tasks, conversations, cards and the
projection of every event). Beside them, at the root: errors, ids, the task state machine,
text rules and the background workers.

The log sits below every service that appends to it, so it cannot import the projection
that applies what they append; this package, which every part of the core loads first,
hands the projection to the log once.
"""

from __future__ import annotations

from hub.core.log.events import use_projection
from hub.core.work import projection

use_projection(projection)
