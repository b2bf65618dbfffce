"""Fault plans and the seeded decision of which request gets which fault (standard library only:
the mitmproxy addon, in its own virtualenv, loads this file by path)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

ANSWER_KINDS = ("http_500", "slow_down_503", "throttle")  # answered by the proxy, never forwarded
RESET_BEFORE = "reset_before"  # connection closed, request never forwarded
AFTER_KINDS = ("reset_after", "error_after", "latency", "truncate")  # forwarded: the emulator applies it
FAULT_KINDS = (*ANSWER_KINDS, RESET_BEFORE, *AFTER_KINDS)
"""Answered by the proxy, never forwarded: http_500, slow_down_503 (S3 SlowDown; SQS
ServiceUnavailable), throttle (S3 503 SlowDown; SQS 400 RequestThrottled). reset_before: the
connection is closed before the request reaches the emulator. Forwarded, so the emulator APPLIES
the request: reset_after (closed before any answer byte), error_after (a 500 instead of the
answer), truncate (headers with the full Content-Length, `keep_bytes` of the body, then closed;
keep_bytes=0 cuts right after the headers), latency (the answer is held back `latency_ms`).
"Closed" is a close without an answer (FIN), which clients report as a broken connection, as they
do a reset; mitmproxy offers no RST."""


@dataclass(frozen=True)
class FaultRule:
    """One fault for one operation, on scripted occurrences or with a probability.

    Occurrences count the requests this rule matches, from 1, whether or not faults are enabled.
    """

    operation: str
    """A classified name (`DeltaCommit`), an API name (`PutObject` also matches commit writes,
    which are PutObjects) or `*` for every request."""
    fault: str
    """One of FAULT_KINDS."""
    nth: tuple[int, ...] = ()
    """Occurrences that get the fault: `(3,)` is the third matching request."""
    probability: float = 0.0
    """Chance that any other matching request gets the fault, drawn from the seed."""
    resource_prefix: str = ""
    """Only requests whose resource (`bucket/key`, or the queue name) starts with this."""
    latency_ms: int = 0
    """For `latency`: how long the emulator's answer is held back before the client gets it."""
    keep_bytes: int = 16
    """For `truncate`: body bytes sent (at most half the body) before the connection is closed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "nth", tuple(self.nth))
        problems = self.problems()
        if problems:
            raise ValueError(f"fault rule {self.operation}/{self.fault}: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """What is wrong with this rule (empty when valid)."""
        out = []
        if self.fault not in FAULT_KINDS:
            out.append(f"fault: expected one of {', '.join(FAULT_KINDS)}, found {self.fault!r}")
        if not 0.0 <= self.probability <= 1.0:
            out.append(f"probability: expected 0..1, found {self.probability}")
        if any(n < 1 for n in self.nth):
            out.append(f"nth: expected occurrences from 1, found {list(self.nth)}")
        if self.keep_bytes < 0:
            out.append(f"keep_bytes: expected >= 0, found {self.keep_bytes}")
        if self.fault == "latency" and self.latency_ms <= 0:
            out.append(f"latency_ms: expected > 0 for latency, found {self.latency_ms}")
        return out

    def matches(self, names: tuple[str, ...], resource: str) -> bool:
        return (self.operation == "*" or self.operation in names) and resource.startswith(
            self.resource_prefix)


@dataclass(frozen=True)
class FaultPlan:
    """The rules (the first matching rule that fires wins), a cap on faults, and on/off."""

    rules: tuple[FaultRule, ...] = ()
    max_faults: int | None = None
    """No more faults after this many (None: no cap)."""
    enabled: bool = True
    """Start with faults on; the proxy's control endpoint switches them at runtime."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultPlan:
        rules = tuple(FaultRule(**rule) for rule in data.get("rules", ()))
        return cls(rules, data.get("max_faults"), data.get("enabled", True))


@dataclass(frozen=True)
class Decision:
    """A fault chosen for one request: the rule, its index in the plan and the occurrence."""

    rule: FaultRule
    index: int
    occurrence: int


@dataclass
class Decider:
    """Chooses the fault for each request from a plan and a seed; counts requests and faults.

    A decision depends only on (seed, rule, occurrence), never on timing or on other operations'
    traffic, so the same seed and plan give the same faults for the same request sequence.
    """

    plan: FaultPlan
    seed: int
    enabled: bool = True
    requests: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    _seen: Counter[int] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.enabled = self.plan.enabled

    def decide(self, name: str, names: tuple[str, ...], resource: str) -> Decision | None:
        """Count one request named `name` (also known as `names`) and return its fault, if any."""
        self.requests[name] += 1
        chosen = None
        for index, rule in enumerate(self.plan.rules):
            if not rule.matches(names, resource):
                continue
            self._seen[index] += 1  # every matching rule counts, so `nth` ignores other rules
            if chosen is None and self._fires(index, rule, self._seen[index]):
                chosen = Decision(rule, index, self._seen[index])
        if chosen is None or not self.enabled or self._capped():
            return None
        self.faults[f"{name}/{chosen.rule.fault}"] += 1
        return chosen

    def _fires(self, index: int, rule: FaultRule, occurrence: int) -> bool:
        if occurrence in rule.nth:
            return True
        # A fresh generator per (seed, rule, occurrence): replayable whatever the interleaving.
        return rule.probability > 0 and random.Random(
            f"{self.seed}:{index}:{occurrence}").random() < rule.probability

    def _capped(self) -> bool:
        return self.plan.max_faults is not None and self.faults.total() >= self.plan.max_faults

    def stats(self) -> dict[str, Any]:
        """Counters for the control endpoint: requests by operation, faults by operation/kind."""
        return {"enabled": self.enabled, "seed": self.seed, "requests": dict(self.requests),
                "faults": dict(self.faults), "total_faults": self.faults.total()}
