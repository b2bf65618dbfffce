"""A run whose target format its Spark line lacks stops before any work, with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

import lakeinlet
from lakeinlet import jars
from lakeinlet.incremental.job import main

pytestmark = pytest.mark.unit


def test_a_hudi_run_on_a_line_without_hudi_stops_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(jars, "installed_line", lambda: "4.1")
    code = main(["run", "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t"),
                 "--target-format", "hudi", "--source-format", "json", "--drain"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "error: Hudi publishes no Spark 4 bundle on Maven Central: Hudi tables need Spark 3.5 "
        "(a virtualenv with lakeinlet's spark35 extra: "
        f"pip install '{lakeinlet.wheel()}[spark35]')")
    assert not (tmp_path / "t").exists()
