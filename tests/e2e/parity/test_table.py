"""docs/channels.md's parity table names the test of every cell the suites run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.parity.kinds import KINDS
from tests.e2e.parity.surfaces import SURFACES

DOC = Path(__file__).resolve().parents[3] / "docs" / "channels.md"


@pytest.mark.same_on_every_database
def test_every_cell_has_its_test_in_the_table() -> None:
    table = DOC.read_text()
    cells = [f"test_answered_here_read_only_everywhere[{k}-{s}]" for k in KINDS for s in SURFACES]
    for surface in SURFACES:
        cells += [
            f"test_an_action_edited_here_reaches_the_agent_edited[{surface}]",
            f"test_a_quorum_vote_here_is_counted_everywhere[{surface}]",
            f"test_a_batch_answered_here_is_read_only_everywhere[{surface}-all]",
            f"test_a_batch_answered_here_is_read_only_everywhere[{surface}-item by item]",
        ]
    missing = [cell for cell in cells if f"`T::{cell}`" not in table]
    assert not missing, f"docs/channels.md's parity table lacks {missing}"
    # What a surface cannot answer is said in its cell, never left a silent gap.
    test_of = {
        "edit": "test_an_action_edited_here_reaches_the_agent_edited[{}]",
        "quorum": "test_a_quorum_vote_here_is_counted_everywhere[{}]",
    }
    unsaid = [
        (name, extra)
        for name, surface in SURFACES.items()
        for extra in surface.cannot
        if f"`T::{test_of[extra].format(name)}` (not offered" not in table
    ]
    assert not unsaid, (
        f"docs/channels.md's parity table does not say these are not offered: {unsaid}"
    )
    assert "`R::test_every_surface_at_once_decides_once[approval]`" in table
