"""NUL in JSON text: found wherever the text writes it, and nothing else taken for it."""

from __future__ import annotations

import json

import pytest

from hub.core.errors import InvalidInput
from hub.core.text import refuse_nul_in_json


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"payload": {"content": "a\x00b"}}, "payload.content"),
        ({"payload": {"tags": ["ok", "\x00"]}}, "payload.tags[1]"),
        ({"payload": {"ke\x00y": 1}}, "payload.ke\x00y"),
    ],
)
def test_a_nul_anywhere_in_the_text_is_refused_and_named(value: dict, where: str) -> None:
    text = json.dumps(value)
    with pytest.raises(InvalidInput) as refused:
        refuse_nul_in_json(text, json.loads(text), "frame")
    assert refused.value.code == "nul_character"
    assert refused.value.to_dict()["details"]["field"] == where


def test_a_backslash_before_u0000_is_text_not_nul() -> None:
    text = json.dumps({"content": "a path: C:\\u0000\\file"})
    assert "\\u0000" in text  # the shortcut cannot skip it: the walk runs and finds no NUL
    refuse_nul_in_json(text, json.loads(text), "frame")
