"""An import-linter contract import-linter lacks: no two modules import each other.

``make lint`` runs it with the contracts in ``pyproject.toml``. Two modules that import each
other are one concept split in two, or a lower one reaching up; either way the pair can
only be imported in one order, and a late function-level import is how such a pair hides.
Every import counts: at module level, inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import Any

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class NoMutualImports(Contract):
    """Configuration: ``containers``, the packages whose modules are checked."""

    type_name = "no_mutual_imports"

    containers = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        pairs: list[dict[str, Any]] = []
        for container in self.containers:  # type: ignore[attr-defined]
            modules = {container.name} | graph.find_descendants(container.name)
            for module in sorted(modules):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    if module < imported and module in graph.find_modules_directly_imported_by(
                        imported
                    ):
                        pairs.append(
                            {
                                "first": module,
                                "second": imported,
                                "lines": [
                                    *self._lines(graph, module, imported),
                                    *self._lines(graph, imported, module),
                                ],
                            }
                        )
        return ContractCheck(kept=not pairs, metadata={"pairs": pairs})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for pair in check.metadata["pairs"]:
            output.print_error(f"{pair['first']} and {pair['second']} import each other:")
            output.new_line()
            for line in pair["lines"]:
                output.indent_cursor()
                output.print_error(line, bold=False)
            output.new_line()

    @staticmethod
    def _lines(graph: grimp.ImportGraph, importer: str, imported: str) -> list[str]:
        return [
            f"{importer} -> {imported} (l. {detail['line_number']}: {detail['line_contents']})"
            for detail in graph.get_import_details(importer=importer, imported=imported)
        ]
