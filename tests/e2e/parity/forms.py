"""An HTML form read the way a browser reads it, for surfaces driven over plain HTTP (an
email's link pages): its fields and their defaults, then submitted with what the person
changed, as the form would post it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlencode


@dataclass
class Form:
    action: str
    fields: list[tuple[str, str]] = field(default_factory=list)  # defaults, in order
    choices: dict[str, list[str]] = field(default_factory=dict)  # radio and checkbox values

    def submit(self, chosen: Mapping[str, str | list[str]]) -> dict[str, Any]:
        """What a browser posts: the form's body with ``chosen`` (by field name; a list for
        several ticks) in place of the defaults (a checkbox or radio the person did not
        touch keeps its default), as ``httpx``'s keywords for a urlencoded POST."""
        body = [(name, value) for name, value in self.fields if name not in chosen]
        for name, value in chosen.items():
            values = value if isinstance(value, list) else [value]
            if name in self.choices:
                unknown = set(values) - set(self.choices[name])
                assert not unknown, f"the form offers no {unknown} for {name}"
            body += [(name, v) for v in values]
        return {
            "content": urlencode(body),
            "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        }


def forms_in(page: str) -> list[Form]:
    parser = _FormParser()
    parser.feed(page)
    return parser.forms


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._textarea: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", "")))
        if not self.forms or "name" not in a:
            return
        form = self.forms[-1]
        if tag == "input":
            kind = a.get("type", "text")
            if kind in ("radio", "checkbox"):
                form.choices.setdefault(a["name"], []).append(a.get("value", "on"))
                if "checked" in a:
                    form.fields.append((a["name"], a.get("value", "on")))
            elif kind not in ("submit", "button"):
                form.fields.append((a["name"], a.get("value", "")))
        elif tag == "textarea":
            self._textarea, self._text = a["name"], ""

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self._textarea is not None and self.forms:
            # A browser drops the newline that opens a textarea's content.
            self.forms[-1].fields.append((self._textarea, self._text.removeprefix("\n")))
            self._textarea = None
