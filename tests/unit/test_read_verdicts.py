"""The read path is one-way: `incremental/read` modules import each other without a cycle and none
imports the reader; the checks import nothing of Spark and return verdicts; a one-pass write's
check is a value (`WriteCheck`), not a closure over the reader."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import CORRUPT, MISSING, SCHEMA_CONFLICT, PlannedObject, WriteCheck
from lakeinlet.incremental.read import case_names, checks
from lakeinlet.incremental.read.checks import Seen

pytestmark = pytest.mark.unit

READ = Path(__file__).resolve().parents[2] / "incremental" / "read"
PACKAGE = "lakeinlet.incremental.read"


def imports(path: Path) -> set[str]:
    """The `read` modules `path` imports, at any level (TYPE_CHECKING blocks included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == PACKAGE:
            found |= {a.name for a in node.names}
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
            [a.name for a in node.names] if isinstance(node, ast.Import) else []
        found |= {n.removeprefix(PACKAGE + ".").split(".")[0] for n in names if n.startswith(PACKAGE + ".")}
    return found - {path.stem}


def graph() -> dict[str, set[str]]:
    return {p.stem: imports(p) for p in sorted(READ.glob("*.py")) if p.stem != "__init__"}


def test_read_modules_import_each_other_one_way_and_none_imports_the_reader() -> None:
    edges = graph()
    assert [m for m, out in edges.items() if "reader" in out] == []
    done: set[str] = set()

    def walk(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' → '.join((*path, module))}"
        if module not in done:
            for other in sorted(edges.get(module, ())):
                walk(other, (*path, module))
            done.add(module)

    for module in edges:
        walk(module, ())


@pytest.mark.parametrize("module", ["checks", "case_names", "causes", "verdicts", "sniff"])
def test_checks_import_nothing_of_spark(module: str) -> None:
    tree = ast.parse((READ / f"{module}.py").read_text(encoding="utf-8"))
    spark = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
             and (n.module or "").split(".")[0] in ("pyspark", "py4j")]
    assert spark == []


def obj(key: str) -> PlannedObject:
    return PlannedObject("b", key, "e", None, 10, key, datetime(2026, 1, 1, tzinfo=UTC), 0)


def test_a_write_check_holds_the_observed_rows_to_the_footers() -> None:
    def seen(**metrics: int) -> Any:
        return SimpleNamespace(get=metrics)

    assert WriteCheck(5, seen(rows=5, unmatched=0)).problem() is None
    assert WriteCheck(5, seen(rows=4, unmatched=0)).problem() == "wrote 4 rows, the footers promise 5"
    assert WriteCheck(5, seen(rows=5, unmatched=2)).problem() == "2 rows without lineage"


def test_no_rows_verdicts_from_what_was_read() -> None:
    assert not checks.read_alone_first(Seen(0, 3, None, None), "the object is gzip-compressed")
    assert checks.no_rows(Seen(0, 3, None, None), "gzip", None) == (
        CORRUPT, "no parseable record (3 malformed): gzip")
    assert checks.no_rows(None, None, 0) is None  # a valid object holding no record
    assert checks.no_rows(None, None, FileNotFoundError("FileNotFound: gone"))[0] == MISSING
    assert checks.no_rows(None, "Avro", 4) == (CORRUPT, "Avro")


def test_type_and_case_verdicts_are_returned_not_written_into_a_callers_dict() -> None:
    long_ = SimpleNamespace(simpleString=lambda: "bigint")
    text = SimpleNamespace(simpleString=lambda: "string")
    objs = [obj("a"), obj("b")]
    typed = {("b", "a"): {"id": long_}, ("b", "b"): {"id": text}}
    failed = checks.type_conflicts(objs, {"id": long_}, typed, lambda o: f"s3://b/{o.key}", fail=False)
    assert list(failed) == [("b", "b")] and failed[("b", "b")][0] == SCHEMA_CONFLICT
    assert "'id' is bigint in the table but string in the object (s3://b/b)" in failed[("b", "b")][1]
    with pytest.raises(TerminalError, match="s3://b/b"):
        checks.type_conflicts(objs, {"id": long_}, typed, lambda o: f"s3://b/{o.key}", fail=True)
    spelled = case_names.split(objs, {("b", "a"): {"Id": long_}, ("b", "b"): {"id": long_}}, None,
                               lambda o: o.key)
    assert list(spelled) == [("b", "b")] and "`id` differs only in case from `Id`" in spelled[("b", "b")][1]
