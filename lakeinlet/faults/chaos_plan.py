"""The campaign's fault plan: every fault kind on every operation the two jobs depend on.

One rule per (operation, kind), each with the same small probability scaled by the operation's
weight, so every kind fires on every operation and no kind starves another (the first rule that
fires wins; with small probabilities they add up). `PutObject` also matches the commit writes
(DeltaCommit, HudiCommit, IcebergCommit), which the log names as such; `GetObject`, `PutObject`
and `ListObjectsV2` cover delta-rs (changelog, ledger, Delta target), s3a (reads, Hudi and
Iceberg writes) and the Hudi writer lease alike.
"""

from __future__ import annotations

from collections.abc import Mapping

from lakeinlet.faults.plan import FAULT_KINDS, FaultPlan, FaultRule

WEIGHTS = {"ReceiveMessage": 1.0, "DeleteMessageBatch": 2.0, "ChangeMessageVisibilityBatch": 2.0,
           "GetObject": 1.0, "HeadObject": 1.0, "PutObject": 1.5, "ListObjectsV2": 1.0}
"""Relative fault probability per operation: the rarer calls get more, so each sees faults."""
LATENCY_MS = {"ReceiveMessage": 1500, "DeleteMessageBatch": 2500, "ChangeMessageVisibilityBatch": 2500}
"""How long a `latency` fault holds the answer; 1000 ms for the S3 operations."""


def chaos_plan(rate: float, weights: Mapping[str, float] = WEIGHTS, enabled: bool = True) -> FaultPlan:
    """A plan where a request of weight 1 gets some fault with probability `rate`.

    Args:
        rate: chance that a request of an operation of weight 1 is faulted (split evenly over
            the fault kinds).
        enabled: start with faults on (the proxy's control endpoint switches them later).
    """
    per_kind = rate / len(FAULT_KINDS)
    rules = [FaultRule(op, kind, probability=min(1.0, per_kind * weight),
                       latency_ms=LATENCY_MS.get(op, 1000) if kind == "latency" else 0)
             for op, weight in weights.items() for kind in FAULT_KINDS]
    return FaultPlan(tuple(rules), enabled=enabled)
