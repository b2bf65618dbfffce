"""Hudi's one-pass write on a Spark without the JVM classes it calls: the Hudi target then stages
no rows (the loader reads and checks a batch before its write), said once for the process; and
the write's own check of what Hudi wrote. No Spark is started."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from lakeinlet import fast_paths
from lakeinlet import jvm as lakejvm
from lakeinlet.aws import AwsSection
from lakeinlet.incremental.targets.hudi import one_pass
from lakeinlet.incremental.targets.hudi.settings import HudiSection
from lakeinlet.incremental.targets.hudi.target import HudiTarget

pytestmark = pytest.mark.unit


class NoLease:
    def acquire(self, wait_seconds: float, role: str = "a loader") -> None: ...

    def check(self) -> None: ...

    def release(self) -> None: ...


@pytest.fixture
def lacking(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The fast path on, nothing yet known about this Spark, and a Spark whose class loader finds
    none of the classes asked for (the names asked)."""
    monkeypatch.delenv(fast_paths.VARIABLE, raising=False)
    monkeypatch.setattr(one_pass, "_lacking", {})
    monkeypatch.setattr(one_pass, "_usable", set())
    asked: list[str] = []

    def loadable(jvm: Any, cls: str) -> bool:
        asked.append(cls)
        return False

    monkeypatch.setattr(lakejvm, "of", lambda spark: object())
    monkeypatch.setattr(lakejvm, "loadable", loadable)
    return asked


def fallbacks(caplog: pytest.LogCaptureFixture) -> list[int]:
    return [r.levelno for r in caplog.records if r.getMessage() == "hudi_one_pass_fallback"]


def test_a_spark_without_the_writer_hooks_stages_no_hudi_rows_and_says_so_once(
        lacking: list[str], caplog: pytest.LogCaptureFixture) -> None:
    target = HudiTarget("s3://lake/t", AwsSection(), "app", [], "s3a", HudiSection(),
                        lambda: object(), NoLease())
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        assert [target.stages_rows, target.stages_rows] == [False, False]
    assert lacking == [one_pass.PARAMS, one_pass.LISTENER]  # asked once: the answer is kept
    assert fallbacks(caplog) == [logging.WARNING]


def test_with_the_fast_path_off_nothing_is_asked(monkeypatch: pytest.MonkeyPatch, lacking: list[str]) -> None:
    monkeypatch.setenv(fast_paths.VARIABLE, "off")
    assert one_pass.usable(object()) is False and lacking == []


@pytest.mark.parametrize(("written", "promised", "why"), [
    (one_pass.Written(10, 0), 10, None),
    (one_pass.Written(9, 0), 10, "Hudi wrote 9 rows, the footers promise 10"),
    (one_pass.Written(10, 1), 10, "Hudi failed to write 1 rows"),
    (one_pass.Written(7, 0), None, None),  # an upsert may combine rows: no count to hold it to
])
def test_what_hudi_wrote_is_held_to_the_footers(written: one_pass.Written, promised: int | None,
                                                why: str | None) -> None:
    assert written.problem(promised) == why
