"""The action hash on cases every SDK must agree on, in a file both SDKs read.

``action_hash_vectors.json`` beside this file holds each case's fields as JSON text (so a
number keeps the form it was written in: ``3.0`` is not ``3`` to the hub), the canonical
JSON and the hash. This test checks the hub's own function against it; the TypeScript SDK's
``sdk/typescript/test/unit/actions.test.ts`` checks its implementation against the same
file. ``REWRITE=1`` rewrites the file from the cases below (review the diff: a change of a
hash breaks every decision already bound to it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hub.protocol.actions import action_hash, canonical_json

VECTORS = Path(__file__).with_name("action_hash_vectors.json")

# (name, kind, fields as JSON text, the same from the numbers JavaScript's JSON.parse gives?)
CASES = [
    (
        "a shell command",
        "shell.command",
        '{"command": "make deploy", "cwd": "/srv/app", "env": ["HOME", "PATH"]}',
        True,
    ),
    (
        "a migration with an editable list and a number",
        "db.migration",
        '{"database": "prod-eu", "statements": ["ALTER TABLE users ADD plan text", '
        '"UPDATE users SET plan = \'free\'"], "batchSize": 500}',
        True,
    ),
    ("no fields", "noop", "{}", True),
    (
        "keys sorted, nested objects too",
        "k",
        '{"b": 1, "a": {"z": true, "y": null, "x": [3, 2, 1]}, "B": false, "_": "", "aa": []}',
        True,
    ),
    (
        "keys sorted by code point, not UTF-16 unit",
        "k",
        '{"\\ufb01": 1, "\\ud83d\\ude00": 2, "z": 3, "\\u00e9": 4}',
        True,
    ),
    (
        "text kept as it is: accents, CJK, emoji, line and paragraph separators",
        "note.write",
        '{"text": "naïve café — 数据库 😀 \\u2028\\u2029", "title": "Ünïcödé"}',
        True,
    ),
    (
        "control characters, quotes and backslashes escaped as JSON does",
        "k",
        '{"s": "tab\\t newline\\n return\\r bell\\u0007 nul\\u0000 del\\u007f quote\\" '
        'backslash\\\\ slash/"}',
        True,
    ),
    (
        "integers, negative and zero",
        "k",
        '{"a": 0, "b": -1, "c": 42, "d": 9007199254740991, "e": -0}',
        True,
    ),
    (
        "an integer beyond 2^53 stays exact",
        "k",
        '{"big": 9007199254740993, "bigger": 123456789012345678901234567890}',
        False,
    ),
    (
        "floats in fixed notation",
        "k",
        '{"a": 0.1, "b": 2.5, "c": -1.25, "d": 123456789.123, "e": 0.0001}',
        True,
    ),
    (
        "floats Python writes in scientific notation",
        "k",
        '{"small": 0.00001, "tiny": 1e-7, "huge": 1.5e300, "wide": 1e21, "neg": -2.5e-8}',
        True,
    ),
    (
        "a float with an integral value stays a float",
        "k",
        '{"three": 3.0, "hundred": 100.0, "zero": 0.0, "negzero": -0.0, "e16": 1e16, "e15": 1e15}',
        False,
    ),
    ("booleans and null", "k", '{"yes": true, "no": false, "nothing": null}', True),
    (
        "lists of mixed values",
        "k",
        '{"list": ["a", 1, 2.5, true, null, {"b": 2, "a": 1}, []]}',
        True,
    ),
]

ABOUT = (
    "The action hash (hub/protocol/actions.py) on cases every SDK must agree on: parse "
    "fieldsJson keeping each number as written, hash it with kind, and get canonical and hash. "
    "fromJavaScriptNumbers: the same holds for the numbers JavaScript's JSON.parse gives (false "
    "where only the written form tells, as 3.0 or an integer past 2^53). Written by "
    "tests/protocol/test_action_hash_vectors.py with REWRITE=1; checked there and by "
    "sdk/typescript/test/unit/actions.test.ts."
)


def vectors() -> dict[str, object]:
    return {
        "about": ABOUT,
        "vectors": [
            {
                "name": name,
                "kind": kind,
                "fieldsJson": text,
                "fromJavaScriptNumbers": from_javascript,
                "canonical": canonical_json(kind, json.loads(text)),
                "hash": action_hash(kind, json.loads(text)),
            }
            for name, kind, text, from_javascript in CASES
        ],
    }


pytestmark = pytest.mark.same_on_every_database


def test_the_vector_file_is_what_the_hub_computes() -> None:
    expected = json.dumps(vectors(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("REWRITE"):
        VECTORS.write_text(expected, encoding="utf-8")
    assert VECTORS.read_text(encoding="utf-8") == expected, (
        "action_hash_vectors.json is not what the hub computes: run REWRITE=1 on this test"
    )


@pytest.mark.parametrize("vector", json.loads(VECTORS.read_text("utf-8"))["vectors"], ids=str)
def test_each_vector(vector: dict[str, str]) -> None:
    fields = json.loads(vector["fieldsJson"])
    assert canonical_json(vector["kind"], fields) == vector["canonical"]
    assert action_hash(vector["kind"], fields) == vector["hash"]
