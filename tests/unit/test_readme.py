"""README.md stays a page a visitor reads in two minutes: at most 150 lines, the two commands CI and a
newcomer run, the test budget, and links that lead into the docs (each to a file that exists)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lakeinlet.dev.cli import reference_text

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 150, f"README.md has {lines} lines: move the detail into docs/"


def test_readme_names_the_two_commands_ci_runs() -> None:
    doc = README.read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make demo" in doc and "make test" in doc
    assert "make test" in ci


def test_readme_keeps_the_test_budget_line() -> None:
    doc = " ".join(README.read_text(encoding="utf-8").split())
    assert "45 minutes on 2 cores" in doc and "make test-all" in doc


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md", "infra/README.md", "incremental/README.md"])
def test_relative_links_lead_to_files(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)
               if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    missing = [t for t in targets if not ((ROOT / doc).parent / t).exists()]
    assert targets and not missing, f"{doc} links to missing files: {missing}"


def test_the_csv_header_default_is_said_where_a_csv_user_looks() -> None:
    """Spark reads CSV without a header by default: the header row loads as data unless told."""
    rows = {line.split("|")[1].strip(): line for line in reference_text().splitlines()
            if line.startswith("| `--")}
    for flag in ("`--source-format`", "`--read-option`"):
        assert "header=true" in rows[flag] and "Spark's default" in rows[flag], flag
    formats = ROOT / "docs" / "concepts" / "formats.md"
    assert "CSV has no header unless `--read-option header=true`" in formats.read_text(encoding="utf-8")
