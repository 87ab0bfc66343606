"""The test environment's installed distributions, packed back into wheels.

A fresh venv installs from these with ``pip install --no-index --find-links``: offline,
and at exactly the versions the tests run with. Only what a requirement needs is packed,
found by walking the installed metadata as pip would resolve it.
"""

from __future__ import annotations

import csv
import io
import zipfile
from importlib.metadata import Distribution, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# Written by the installer, about this installation: a fresh install writes its own.
_INSTALL_RECORDS = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def _needed(root: str, extras: set[str]) -> dict[str, Distribution]:
    """``root`` with ``extras`` and everything it requires, as installed here."""
    found: dict[str, Distribution] = {}
    wanted: list[tuple[str, set[str]]] = [(root, extras)]
    seen: set[tuple[str, frozenset[str]]] = set()
    while wanted:
        name, with_extras = wanted.pop()
        key = (canonicalize_name(name), frozenset(with_extras))
        if key in seen:
            continue
        seen.add(key)
        dist = distribution(name)
        found[key[0]] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(
                marker.evaluate({"extra": extra}) for extra in (with_extras or {""})
            ):
                wanted.append((requirement.name, set(requirement.extras)))
    return found


def _pack(dist: Distribution, into: Path) -> Path:
    info = next(f for f in dist.files or [] if f.name == "METADATA").parent
    tags = [
        line.split(":", 1)[1].strip().split("-")
        for line in (dist.read_text("WHEEL") or "Tag: py3-none-any").splitlines()
        if line.startswith("Tag:")
    ]
    # A wheel's file name joins its tags' parts (py2.py3-none-any): pip matches on those.
    tag = "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    wheel = into / f"{name}-{dist.version}-{tag}.whl"
    record = io.StringIO()
    rows = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or []:
            path = str(file)
            if path.startswith("..") or file.suffix == ".pyc":
                continue  # scripts outside the tree are made again from the entry points
            if file.parent == info and file.name in _INSTALL_RECORDS:
                continue
            source = Path(str(dist.locate_file(file)))
            if source.is_file():
                archive.write(source, path)
                rows.writerow([path, "", ""])
        rows.writerow([f"{info}/RECORD", "", ""])
        archive.writestr(f"{info}/RECORD", record.getvalue())
    return wheel


def build_wheelhouse(root: str, extras: set[str], into: Path) -> list[Path]:
    """Wheels of what ``root[extras]`` needs (``root`` itself left out), in ``into``."""
    return [
        _pack(dist, into)
        for name, dist in _needed(root, extras).items()
        if name != canonicalize_name(root)
    ]
