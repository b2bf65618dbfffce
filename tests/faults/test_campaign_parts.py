"""The campaign's plan, budget, rotation and table, without running anything."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from chaos.campaign import MIN_CHAOS_SECONDS, chaos_budget, settings_for, validate
from chaos.chaos_plan import WEIGHTS, chaos_plan
from chaos.checker import CheckReport, Finding
from chaos.plan import FAULT_KINDS, Decider
from chaos.report import render
from chaos.run_result import RunResult

pytestmark = pytest.mark.unit


def test_the_plan_fires_every_kind_on_every_operation_near_the_asked_rate() -> None:
    decider = Decider(chaos_plan(0.2), seed=5)
    fired: Counter[tuple[str, str]] = Counter()
    for _ in range(4000):
        for op in WEIGHTS:
            decision = decider.decide(op, (op,), "bucket/key")
            if decision is not None:
                fired[op, decision.rule.fault] += 1
    assert {(op, kind) for op in WEIGHTS for kind in FAULT_KINDS} == set(fired)
    rate = sum(n for (op, _), n in fired.items() if op == "ListObjectsV2") / 4000  # weight 1
    assert 0.16 < rate < 0.2  # the rules draw one after the other: a little under 0.2


def test_commit_writes_are_faulted_through_the_put_object_rules() -> None:
    decider = Decider(chaos_plan(0.5), seed=1)
    names = ("DeltaCommit", "PutObject")
    decisions = [decider.decide("DeltaCommit", names, "lake/t/_delta_log/1.json") for _ in range(400)]
    kinds = {d.rule.fault for d in decisions if d is not None}
    assert kinds == set(FAULT_KINDS)


def args(**kw: object) -> argparse.Namespace:
    base = {"seed": 3, "runs": 6, "minutes": 19.0, "formats": "delta,hudi,iceberg", "fault_rate": 0.1,
            "poller_kill_every": 10.0, "loader_kill_every": 100.0, "maintainers": 1, "pace": 1.0,
            "jars": None}
    return argparse.Namespace(**(base | kw))


def test_runs_rotate_formats_alternate_sources_and_get_their_own_seeds() -> None:
    runs = [settings_for(args(), i, 60.0) for i in range(6)]
    assert [r.target_format for r in runs] == ["delta", "hudi", "iceberg"] * 2
    assert [r.source_format for r in runs] == ["parquet", "json"] * 3
    assert len({r.seed for r in runs}) == 6 and runs[4].workload.source_format == "parquet"


def test_the_budget_shares_what_is_left_and_never_goes_below_the_minimum() -> None:
    assert chaos_budget(19 * 60, 3) == pytest.approx(19 * 60 / 3 - 170)
    assert chaos_budget(100, 2) == MIN_CHAOS_SECONDS


def test_bad_arguments_are_all_reported() -> None:
    problems = validate(args(runs=0, minutes=0, formats="delta,orc", fault_rate=2.0))
    assert len(problems) == 4 and any("orc" in p for p in problems)


def result(fmt: str, report: CheckReport) -> RunResult:
    return RunResult(0, 1, fmt, "json", {"chaos": 60.0}, 10, 12, {"duplicate": 2},
                     {"truncate": 5, "latency": 2}, {"GetObject": 7}, 3, {"poller": 4, "loader": 1},
                     {"poller:1": 2}, 3, 1, 0, [2, 3, 3], 9, 4, True, report)


def test_the_table_totals_runs_and_names_every_finding() -> None:
    bad = CheckReport(expected=30, found=31, duplicated=1,
                      findings=[Finding("duplicated", "in/a", "version 0: 1 extra copies")])
    bad_run = result("hudi", bad)
    bad_run.suspects = ["duplicated 'in/a': version 0: 1 extra copies; faults on the object: none"]
    text = render([result("delta", CheckReport(expected=30, found=30)), bad_run], "== header")
    lines = text.splitlines()
    total = next(line for line in lines if line.split()[:1] == ["all"])
    assert total.split()[-1] == "FAILED" and " 60 " in total
    assert " 4/6/6 " in total  # maintain passes: committed / ended well / run, summed over runs
    truncate = next(line for line in lines if line.strip().startswith("truncate"))
    assert truncate.split() == ["truncate", "5", "5", "10"]
    assert "run 0 hudi: duplicated 'in/a'" in text
