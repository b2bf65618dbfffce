"""The fault log the proxy writes, one JSON line per request that got a fault; the checker matches
outcomes against it (`applied`: the emulator carried out a request whose client saw a failure)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class FaultRecord:
    """One faulted request, as logged by the addon."""

    time: float  # unix seconds when the fault was applied
    seq: int  # the request's arrival number at the proxy (control requests excluded)
    generation: int  # which plan: 0 at start, +1 per `FaultProxy.set_plan`
    operation: str  # classified name: PutObject, DeltaCommit, ReceiveMessage ...
    api: str  # AWS API name (PutObject for a DeltaCommit)
    service: str
    bucket: str
    key: str
    queue: str
    fault: str  # the fault kind
    rule: int  # index of the rule in the plan
    occurrence: int  # the rule's count of matching requests when it fired
    forwarded: bool  # the request reached the emulator
    upstream_status: int | None  # the emulator's status, when it answered
    applied: bool  # forwarded and answered 2xx/3xx: the effect exists though the client erred


def read_fault_log(path: str | Path) -> list[FaultRecord]:
    """All records of a fault log, in the order written (empty if the file does not exist)."""
    log = Path(path)
    if not log.exists():
        return []
    names = {f.name for f in fields(FaultRecord)}
    records = []
    for line in log.read_text().splitlines():
        if line.strip():
            data = json.loads(line)
            records.append(FaultRecord(**{k: v for k, v in data.items() if k in names}))
    return records


def count_faults(records: Iterable[FaultRecord]) -> Counter[tuple[str, str]]:
    """Faults by (operation, fault kind)."""
    return Counter((r.operation, r.fault) for r in records)
