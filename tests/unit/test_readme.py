"""The README's configuration reference is the one generated from the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet.dev.cli import REF_END, REF_START, reference_text

pytestmark = pytest.mark.unit
README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_reference_matches_the_code() -> None:
    doc = README.read_text(encoding="utf-8")
    block = doc.split(REF_START, 1)[1].split(REF_END, 1)[0]
    assert block.strip() == reference_text().strip(), (
        "README.md's configuration reference is stale: run `make docs`")


def test_readme_names_the_two_commands_ci_runs() -> None:
    doc = README.read_text(encoding="utf-8")
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "make demo" in doc and "make test" in doc
    assert "make test" in ci


def test_the_csv_header_default_is_said_where_a_csv_user_looks() -> None:
    """Spark reads CSV without a header by default: the header row loads as data unless told."""
    rows = {line.split("|")[1].strip(): line for line in reference_text().splitlines()
            if line.startswith("| `--")}
    for flag in ("`--source-format`", "`--read-option`"):
        assert "header=true" in rows[flag] and "Spark's default" in rows[flag], flag
    assert "CSV has no header unless `--read-option header=true`" in README.read_text(encoding="utf-8")
