"""How the suite shares the machine: the heaviest work units first across pytest-xdist's workers, each
test file one unit (its module fixtures start once), and each tier's time printed at the end."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest

HEAVY_FIRST = ("cluster", "packaging", "chaos", "notebooks", "terraform", "spark", "faults", "integration",
               "contract", "unit")
"""Tiers (folders under tests/) in the order their units are handed out: the longest units first, so
the workers finish together instead of one waiting on the cluster tier at the end."""
SHARED_UNITS = {"cluster": "wheel", "packaging": "wheel"}
"""Tiers whose files share one unit: both use the session's built wheel and its venv."""
SECTIONS = "lakeinlet_sections"
"""The key of `workeroutput` that carries report sections from an xdist worker to the controller."""
JVM_OPTIONS = "-XX:TieredStopAtLevel=1"
"""The JVM options of every JVM the suite starts: the client compiler only. Its JVMs are short-lived
and do little work each, so the server compiler's threads cost more than they repay."""

_sections: dict[str, list[str]] = {}


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("SPARK_SUBMIT_OPTS", JVM_OPTIONS)  # every local driver, spark-submit's too


def add_section(title: str, lines: list[str]) -> None:
    """A section for the end of the run (printed by the controller, whichever worker made it)."""
    _sections[title] = lines


def tier(item: pytest.Item) -> str:
    """The test's tier: its folder under tests/."""
    parts = item.nodeid.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "other"


def _rank(item: pytest.Item) -> int:
    name = tier(item)
    return HEAVY_FIRST.index(name) if name in HEAVY_FIRST else len(HEAVY_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heaviest tiers first; a stable sort, so files keep their order inside a tier."""
    items.sort(key=_rank)


def unit_of(nodeid: str) -> str:
    """The work unit a test belongs to: its file, or its tier's shared unit (`SHARED_UNITS`)."""
    parts = nodeid.split("/")
    shared = SHARED_UNITS.get(parts[1]) if len(parts) > 2 and parts[0] == "tests" else None
    return shared or nodeid.split("::")[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduler with `unit_of` as the scope, handing units out in collection order:
    each file's module fixtures start once, and the heaviest units go first."""
    from xdist.scheduler import LoadScopeScheduling

    class Units(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return Units(config, log)


@dataclass
class _Span:
    tests: int = 0
    busy: float = 0.0
    first: float = float("inf")
    last: float = 0.0


_spans: dict[str, _Span] = defaultdict(_Span)
_started = time.time()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each phase of each test, on the controller (xdist forwards every worker's reports)."""
    name = report.nodeid.split("/")[1] if report.nodeid.startswith("tests/") else "other"
    span = _spans[name]
    span.tests += report.when == "call" or (report.when == "setup" and report.skipped)
    span.busy += report.duration
    if report.start:
        span.first, span.last = min(span.first, report.start), max(span.last, report.stop)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out[SECTIONS] = dict(_sections)


def pytest_testnodedown(node: Any, error: Any) -> None:
    _sections.update(getattr(node, "workeroutput", {}).get(SECTIONS, {}))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    for title, lines in _sections.items():
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
    if not _spans:
        return
    terminalreporter.section("time per tier")
    terminalreporter.write_line(f"{'tier':<12} {'tests':>6} {'test time s':>12} {'from s':>8} {'to s':>8} "
                                f"{'wall s':>8}")
    ordered = sorted(_spans.items(), key=lambda kv: kv[1].first)
    for name, s in ordered:
        terminalreporter.write_line(f"{name:<12} {s.tests:>6} {s.busy:>12.1f} {s.first - _started:>8.1f} "
                                    f"{s.last - _started:>8.1f} {s.last - s.first:>8.1f}")
    workers = getattr(config.option, "numprocesses", None) or 1
    terminalreporter.write_line(f"whole run: {time.time() - _started:.1f} s wall on {workers} worker(s); "
                                "test time sums every test's setup, call and teardown; a tier's wall runs "
                                "from its first test's start to its last test's end (tiers overlap when "
                                "workers run them side by side)")

