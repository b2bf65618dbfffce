"""The notebooks as committed: no outputs, a kernel anyone has, and no logic that lives only there."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
EXPECTED = ["01_quickstart.ipynb", "02_changelog_and_lag.ipynb", "03_reset_and_backfill.ipynb"]
MAX_CODE_LINES = 10  # not counting imports: a notebook cell calls lakeinlet, it does not implement

pytestmark = [pytest.mark.notebooks, pytest.mark.unit]


def load(name: str) -> Any:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def code_cells(nb: Any) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_the_notebooks_the_layout_asks_for_are_there() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_without_outputs(name: str) -> None:
    nb = load(name)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and (c.get("outputs") or c.get("execution_count") is not None
                  or "execution" in c.get("metadata", {}))]
    assert not dirty, f"{name}: cells {dirty} carry outputs; clear them before committing"
    assert "widgets" not in nb.metadata
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", EXPECTED)
def test_cells_call_lakeinlet_and_define_nothing(name: str) -> None:
    nb = load(name)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")
    cells = code_cells(nb)
    assert "from lakeinlet.observe import frames as observe" in cells[0]
    for source in cells:
        python = "\n".join(line for line in source.splitlines() if not line.startswith("%"))
        tree = ast.parse(python)
        defined = [type(n).__name__ for n in ast.walk(tree)
                   if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef | ast.Lambda)]
        assert not defined, f"{name}: a cell defines {defined}; put that logic in lakeinlet\n{source}"
        body = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)]
        lines = sum((n.end_lineno or n.lineno) - n.lineno + 1 for n in body)
        assert lines <= MAX_CODE_LINES, f"{name}: a cell of {lines} lines\n{source}"


@pytest.mark.parametrize("name", EXPECTED)
def test_last_cell_stops_spark_and_the_emulator_and_prints_a_summary(name: str) -> None:
    last = code_cells(load(name))[-1]
    assert "observe.stop_spark()" in last and "server.stop()" in last and "print(json.dumps(" in last
