"""lakeinlet's product modules, computed from the source tree: what the sdist and wheel must hold."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.installed import ROOT

PACKAGE_DIRS = {"lakeinlet": "lakeinlet", "lakeinlet.sources": "sources",
                "lakeinlet.incremental": "incremental"}
"""Package → folder in the checkout (`sources/` ships as `lakeinlet.sources`)."""
HARNESS = ("chaos", "tests")
"""Packages that never ship (the fault-injection harness of tests, bench and `make chaos`; the tests)."""
NEEDS_EXTRA = {"lakeinlet.observe.frames": "notebooks", "lakeinlet.observe.plots": "notebooks",
               "lakeinlet.observe.targets": "notebooks", "lakeinlet.observe.pipeline": "notebooks",
               "lakeinlet.dev.moto_server": "local"}
"""Modules that import a dependency of an extra only (pandas, matplotlib for the notebooks; moto's
server for the local stack)."""


def _harness(module: str) -> bool:
    return any(module == h or module.startswith(h + ".") for h in HARNESS)


def sources() -> dict[str, Path]:
    """Every product module's name → its file relative to the checkout (subfolders of a mapped
    folder are packages of their own, e.g. `incremental/targets` → `lakeinlet.incremental.targets`)."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder)
            parts = [package, *rel.parent.parts] + ([] if rel.name == "__init__.py" else [rel.stem])
            name = ".".join(parts)
            if "__pycache__" not in rel.parts and not _harness(name):
                found[name] = path.relative_to(ROOT)
    return found


def wheel_path(module: str, source: Path) -> str:
    """Where a module's file lives inside the wheel (its package path, not the checkout folder)."""
    path = module.replace(".", "/")
    return f"{path}/__init__.py" if source.name == "__init__.py" else f"{path}.py"


def harness_importers() -> dict[str, list[str]]:
    """Product modules that import a harness package (they would break without it installed)."""
    out: dict[str, list[str]] = {}
    for name, rel in sources().items():
        names = [n for node in ast.walk(ast.parse((ROOT / rel).read_text(encoding="utf-8")))
                 for n in _imported(node) if _harness(n)]
        if names:
            out[name] = names
    return out


def _imported(node: ast.AST) -> list[str]:
    """Absolute module names an import statement names (`from a import b` names a and a.b)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
    return []
