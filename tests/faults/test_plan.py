"""Fault plans: scripted and seeded decisions, replay, the cap, on/off and validation."""

from __future__ import annotations

import pytest

from chaos.plan import Decider, FaultPlan, FaultRule

pytestmark = pytest.mark.unit

PUT = ("PutObject",)
COMMIT = ("DeltaCommit", "PutObject")
DELETE = ("DeleteMessageBatch",)


def faulted(decider: Decider, sequence: list[tuple[str, ...]], resource: str = "bkt/k") -> list[int]:
    """Indexes (from 1) of the requests in `sequence` that got a fault."""
    return [i for i, names in enumerate(sequence, 1)
            if decider.decide(names[0], names, resource) is not None]


def test_nth_faults_exactly_the_scripted_occurrences_of_the_operation() -> None:
    decider = Decider(FaultPlan((FaultRule("DeleteMessageBatch", "error_after", nth=(3,)),)), seed=1)
    sequence = [PUT, DELETE, PUT, DELETE, DELETE, DELETE, PUT]
    assert faulted(decider, sequence) == [5]  # the 3rd DeleteMessageBatch is the 5th request
    assert decider.stats()["faults"] == {"DeleteMessageBatch/error_after": 1}
    assert decider.stats()["requests"] == {"PutObject": 3, "DeleteMessageBatch": 4}


def test_an_api_name_rule_matches_commit_writes_and_a_commit_rule_only_commits() -> None:
    put_rule = Decider(FaultPlan((FaultRule("PutObject", "http_500", nth=(1, 2)),)), seed=0)
    assert faulted(put_rule, [COMMIT, PUT]) == [1, 2]
    commit_rule = Decider(FaultPlan((FaultRule("DeltaCommit", "http_500", nth=(1, 2)),)), seed=0)
    assert faulted(commit_rule, [PUT, COMMIT, PUT, COMMIT]) == [2, 4]


def test_same_seed_replays_and_another_seed_differs() -> None:
    plan = FaultPlan((FaultRule("PutObject", "http_500", probability=0.3),))
    runs = [faulted(Decider(plan, seed), [PUT] * 200) for seed in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert 30 < len(runs[0]) < 90  # about 30 % of 200


def test_decisions_of_one_operation_do_not_depend_on_other_traffic() -> None:
    plan = FaultPlan((FaultRule("PutObject", "http_500", probability=0.5),
                      FaultRule("DeleteMessageBatch", "reset_after", probability=0.5)))
    alone, mixed = Decider(plan, 3), Decider(plan, 3)
    puts_alone = [d is not None for d in (alone.decide("PutObject", PUT, "b/k") for _ in range(50))]
    puts_mixed = []
    for i in range(50):
        for _ in range(i % 3):  # a varying number of other requests in between
            mixed.decide("DeleteMessageBatch", DELETE, "q")
        puts_mixed.append(mixed.decide("PutObject", PUT, "b/k") is not None)
    assert puts_alone == puts_mixed


def test_first_matching_rule_wins_and_every_matching_rule_counts_occurrences() -> None:
    plan = FaultPlan((FaultRule("*", "latency", nth=(1,), latency_ms=5),
                      FaultRule("PutObject", "reset_before", nth=(1, 2))))
    decider = Decider(plan, 0)
    kinds = [d.rule.fault if d else None for d in (decider.decide("PutObject", PUT, "b/k")
                                                   for _ in range(3))]
    assert kinds == ["latency", "reset_before", None]


def test_resource_prefix_limits_a_rule_to_a_bucket_or_queue() -> None:
    decider = Decider(FaultPlan((FaultRule("PutObject", "http_500", nth=(1, 2, 3),
                                           resource_prefix="lake/"),)), 0)
    hits = [decider.decide("PutObject", PUT, res) is not None for res in ("land/k", "lake/t/x")]
    assert hits == [False, True]


def test_cap_stops_faults_and_disabling_pauses_them_without_losing_occurrences() -> None:
    capped = Decider(FaultPlan((FaultRule("PutObject", "http_500", probability=1.0),), max_faults=2), 0)
    assert faulted(capped, [PUT] * 5) == [1, 2]
    decider = Decider(FaultPlan((FaultRule("PutObject", "http_500", nth=(2, 3)),), enabled=False), 0)
    assert faulted(decider, [PUT, PUT]) == []
    decider.enabled = True
    assert faulted(decider, [PUT, PUT]) == [1]  # occurrence 3 of the rule, counted while off


def test_plan_round_trips_through_a_dict() -> None:
    plan = FaultPlan((FaultRule("GetObject", "truncate", nth=(1, 4), keep_bytes=3),
                      FaultRule("*", "latency", probability=0.1, latency_ms=50)), max_faults=9)
    assert FaultPlan.from_dict(plan.to_dict()) == plan


@pytest.mark.parametrize(("kwargs", "problem"), [
    ({"fault": "explode"}, "fault: expected one of"),
    ({"fault": "http_500", "probability": 1.5}, "probability: expected 0..1"),
    ({"fault": "http_500", "nth": (0,)}, "nth: expected occurrences from 1"),
    ({"fault": "latency"}, "latency_ms: expected > 0"),
    ({"fault": "truncate", "keep_bytes": -1}, "keep_bytes: expected >= 0"),
])
def test_invalid_rules_are_refused_with_what_was_expected(kwargs: dict[str, object], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        FaultRule("PutObject", **kwargs)  # type: ignore[arg-type]
