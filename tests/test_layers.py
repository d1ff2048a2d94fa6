"""The layers of ``arena/`` (ARCHITECTURE.md): every import points down or within its layer.

Reads every module's imports with `ast` (function-level and ``TYPE_CHECKING`` imports
included: a type-only import upward is still a dependency upward), so the rule holds
without importing anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"

#: Lowest first. A module may import its own layer and the layers before it.
LAYERS = ["errors", "game", "stats", "bots", "protocol", "runtime", "play", "results", "tournament", "ladder",
          "report", "cli"]  # fmt: skip
#: Top-level modules that are not a layer of their own: where they sit.
TOP = {"__init__": "errors", "errors": "errors", "sdk": "protocol", "__main__": "cli"}


def layer_of(module: str) -> str:
    """``arena.runtime.pool`` -> ``runtime``; a top-level module by `TOP`."""
    parts = module.split(".")
    assert parts[0] == "arena", module
    if len(parts) == 1:
        return TOP["__init__"]
    return parts[1] if parts[1] in LAYERS else TOP[parts[1]]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ARENA.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def arena_imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) for every import of something in ``arena`` by ``module`` (whose
    source is given), relative ones resolved."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(source, module)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "arena"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "arena":
                continue
            if node.module is None or target in ("arena", *(f"arena.{x}" for x in LAYERS)):
                # "from . import x": x is a module of that package, or a name defined in it
                out += [(node.lineno, f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target)
                        for a in node.names]  # fmt: skip
            else:
                out.append((node.lineno, target))
    return out


def _is_module(name: str) -> bool:
    path = ARENA.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


MODULES = sorted(p for p in ARENA.rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    return arena_imports(path.read_text(), module_name(path), path.name == "__init__.py")


def test_every_module_belongs_to_a_layer():
    for path in MODULES:
        assert layer_of(module_name(path)) in LAYERS, path
    assert {p.name for p in ARENA.iterdir() if p.is_dir() and p.name != "__pycache__"} <= {*LAYERS, "bundled", "spec"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ARENA.parent)))
def test_imports_point_down_or_within_the_layer(path):
    mine = layer_of(module_name(path))
    for line, target in imports_of(path):
        theirs = layer_of(target)
        assert LAYERS.index(theirs) <= LAYERS.index(mine), (
            f"{path.relative_to(ARENA.parent)}:{line} imports {target}: layer {mine!r} must not import "
            f"{theirs!r}, which is above it (order: {' < '.join(LAYERS)})"
        )


def test_the_rules_engine_imports_nothing_else_of_arena():
    for path in (ARENA / "game").rglob("*.py"):
        outside = [t for _, t in imports_of(path) if layer_of(t) != "game"]
        assert not outside, f"{path}: the engine is pure and standalone, but imports {outside}"


def test_the_checker_resolves_relative_imports_and_sees_an_upward_one():
    """The rule is not vacuous: imports of every form resolve, and an upward one is found."""
    source = (
        "from ..report.html import build_report\n"
        "from . import margins\n"
        "import arena.cli.main\n"
        "def f():\n    from ..runtime import sandbox\n"
    )
    got = [t for _, t in arena_imports(source, "arena.stats.probe")]
    assert got == ["arena.report.html", "arena.stats.margins", "arena.cli.main", "arena.runtime.sandbox"]
    assert [layer_of(t) for t in got] == ["report", "stats", "cli", "runtime"]
