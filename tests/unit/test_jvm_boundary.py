"""PySpark's private attributes that hold its Java objects are read in lakeinlet/jvm.py alone, so a
Spark line that moves them changes one module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("lakeinlet", "sources", "incremental", "tests", "bench", "chaos")
PRIVATE = re.compile(r"\._(jvm|jsparkSession|jdf|jsc|gateway|ensure_initialized)\b")
ALLOWED = {ROOT / "lakeinlet" / "jvm.py", Path(__file__).resolve()}


def test_only_lakeinlet_jvm_reaches_pysparks_java_objects() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             if path.resolve() not in ALLOWED
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if PRIVATE.search(line)]
    assert not found, "use lakeinlet.jvm instead of:\n" + "\n".join(found)
