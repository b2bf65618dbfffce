"""The campaign's fault plan: every fault kind on every operation the two jobs depend on."""

from __future__ import annotations

from collections.abc import Mapping

from chaos.plan import FAULT_KINDS, FaultPlan, FaultRule

WEIGHTS = {"ReceiveMessage": 3.0, "DeleteMessageBatch": 3.0, "ChangeMessageVisibilityBatch": 3.0,
           "GetObject": 0.5, "HeadObject": 2.0, "PutObject": 1.5, "ListObjectsV2": 1.0}
"""Relative fault probability per operation. The queue calls are frequent but cheap to fail (a
lost receive comes back after the visibility timeout); GetObject is by far the most frequent call
(every delta-rs table open reads the log) and a cut body kills the job that made it (delta-rs does
not retry it), so it gets less, or loaders would spend the run restarting."""
LATENCY_MS = {"ReceiveMessage": 1500, "DeleteMessageBatch": 2500, "ChangeMessageVisibilityBatch": 2500}
"""How long a `latency` fault holds the answer; 1000 ms for the S3 operations."""


def chaos_plan(rate: float, weights: Mapping[str, float] = WEIGHTS, enabled: bool = True) -> FaultPlan:
    """A plan where a request of weight 1 gets some fault with probability `rate`.

    One rule per (operation, kind), each with the same small probability scaled by the operation's
    weight, so every kind fires on every operation and no kind starves another (the first rule
    that fires wins; with small probabilities they add up). `PutObject` also matches the commit
    writes (DeltaCommit, HudiCommit, IcebergCommit), which the log names as such; `GetObject`,
    `PutObject` and `ListObjectsV2` cover delta-rs (changelog, ledger, Delta target), s3a (reads,
    Hudi and Iceberg writes) and the Hudi writer lease alike.

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
