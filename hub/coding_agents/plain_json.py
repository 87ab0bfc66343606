"""One text field of a JSON document, read without the ``json`` module.

The hook runs on every tool call, and importing ``json`` (with ``re`` and ``enum`` behind
it) was 18 ms of its 60 ms start-up here. The fields it needs before it can pass the event
on (the event's name, the hub's address, the credential) are plain ASCII text in documents
the CLIs and ``lineup connect`` write; anything less plain (an escape, another type) is
left to the ``json`` module by returning None.
"""

from __future__ import annotations


def text_field(document: bytes, name: str) -> str | None:
    """The text value of the first ``"name":`` in ``document``, or None if it is not a plain
    string (escapes included) — the caller then parses the document properly."""
    key = b'"' + name.encode() + b'"'
    at = document.find(key)
    if at < 0:
        return None
    at += len(key)
    while at < len(document) and document[at : at + 1] in b" \t\r\n":
        at += 1
    if document[at : at + 1] != b":":
        return None
    at += 1
    while at < len(document) and document[at : at + 1] in b" \t\r\n":
        at += 1
    if document[at : at + 1] != b'"':
        return None
    end = document.find(b'"', at + 1)
    if end < 0:
        return None
    value = document[at + 1 : end]
    if b"\\" in value or not value.isascii():
        return None
    return value.decode("ascii")
