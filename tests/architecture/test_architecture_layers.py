"""The package layers of docs/architecture.md hold, so `pytest` alone enforces them too.

The contract itself is `[tool.importlinter]` in pyproject.toml (also run by `./run lint`);
these tests run it and keep it, the list of packages and the documented picture in step.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "queryloop"
EXEMPT_FROM_TESTING_BAN = {"demo", "testing"}
"""The demo serves its model with the test server; testing may import itself."""


def _contracts() -> dict[str, dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return {c["id"]: c for c in contracts}


def _packages() -> set[str]:
    """Every direct child of `queryloop`: subpackages and top-level modules."""
    children = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    children |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return children


def test_the_import_contracts_are_kept() -> None:
    """No package imports one above it or a sibling across `|`, even inside a function."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--no-cache",
            "--no-logo",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Contracts: 3 kept, 0 broken." in done.stdout, done.stdout


def test_the_layers_count_function_imports_and_skip_type_checking_ones() -> None:
    """`if TYPE_CHECKING:` imports are for annotations only; an import in a function runs."""
    session = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    options = session["tool"]["importlinter"]
    assert options["root_package"] == "queryloop"
    assert options["exclude_type_checking_imports"] is True
    layers = _contracts()["layers"]
    assert layers["containers"] == ["queryloop"] and layers["exhaustive"] is True


def test_no_production_package_is_left_out_of_the_testing_ban() -> None:
    forbidden = _contracts()["testing"]
    listed = {m.removeprefix("queryloop.") for m in forbidden["source_modules"]}
    assert forbidden["forbidden_modules"] == ["queryloop.testing"]
    assert listed == _packages() - EXEMPT_FROM_TESTING_BAN


def test_the_documented_picture_is_the_contract() -> None:
    """docs/architecture.md draws the layers; the drawing must not drift from the contract."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers -->", 2)[1]
    # One layer a line: its packages, then two spaces and why; indented lines continue the why.
    drawn = [
        " | ".join(re.findall(r"[a-z_]+", line.split("  ", 1)[0]))
        for line in block.splitlines()
        if line.strip() and not line.startswith((" ", "```"))
    ]
    assert drawn == _contracts()["layers"]["layers"]


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_takes_part_in_an_import_cycle() -> None:
    """Between any two modules (a package's `__init__` included, across packages too), no
    import chain leads back: imports inside functions count, `TYPE_CHECKING` ones do not.
    The acyclic contract in pyproject.toml checks siblings; this checks the whole graph."""
    graph = grimp.build_graph("queryloop", exclude_type_checking_imports=True)
    for ignored in _contracts()["acyclic"].get("ignore_imports", []):
        importer, imported = (part.strip() for part in ignored.split("->"))
        graph.remove_import(importer=importer, imported=imported)
    assert _cycles(graph) == []
