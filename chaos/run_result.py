"""What one chaos run did and found: counts for the campaign table, and the findings matched
against the faults fired and the kills (the suspects an investigation starts from)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from chaos.checker import CheckReport, Finding
from chaos.fault_log import FaultRecord
from chaos.processes import Kill, Supervisor, log_events
from chaos.workload import UploadedVersion, Workload

if TYPE_CHECKING:
    from chaos.run import RunSettings

UNCERTAIN = ("reset_after", "error_after", "truncate")
"""Kinds where the emulator applied the request although the client saw a failure."""
COMMITS = ("DeltaCommit", "HudiCommit", "IcebergCommit")
WINDOW_SECONDS = 120.0


@dataclass
class RunResult:
    """One run's figures (JSON-able) and its checker report."""

    index: int
    seed: int
    target_format: str
    source_format: str
    seconds: dict[str, float]
    objects: int
    versions: int
    crafted: dict[str, int]
    faults: dict[str, int]
    """Faults fired by kind."""
    faults_by_operation: dict[str, int]
    uncertain: int
    """Requests the emulator applied while the client saw a failure."""
    kills: dict[str, int]
    exits: dict[str, int]
    loader_batches: int
    conflicts: int
    lease_waits: int
    compactions: list[int]
    """`maintain` passes beside the loaders: [that committed a rewrite, that ended without error, run]."""
    changelog_commits: int
    target_commits: int
    converged: bool
    report: CheckReport
    suspects: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.report.ok and self.converged

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


def collect(settings: RunSettings, report: CheckReport, faults: Sequence[FaultRecord], supervisor: Supervisor,
            workload: Workload, target_commits: int, converged: bool, seconds: dict[str, float]) -> RunResult:
    """Gather a run's figures from the fault log, the supervisor, the job logs and the manifest."""
    versions = workload.manifest.snapshot()
    loader = log_events([*supervisor.logs("loader"), *supervisor.log_dir.glob("clean-drain.log")])
    pollers = log_events([*supervisor.logs("poller"), *supervisor.logs("clean-poller")])
    return RunResult(
        settings.index, settings.seed, settings.target_format, settings.source_format,
        {k: round(v, 1) for k, v in seconds.items()}, len({v.key for v in versions}), len(versions),
        dict(workload.manifest.crafted), dict(Counter(f.fault for f in faults)),
        dict(Counter(f.operation for f in faults)), sum(f.applied and f.fault in UNCERTAIN for f in faults),
        dict(Counter(k.kind for k in supervisor.kills)), dict(supervisor.exits),
        sum(e.get("event") == "batch" for e in loader), sum(e.get("event") == "conflict" for e in loader),
        sum(str(e.get("event", "")).startswith("waiting for the writer") for e in loader),
        compactions(supervisor),
        sum(e.get("event") == "batch" and e.get("version") is not None for e in pollers),
        target_commits, converged, report,
        [suspects(f, versions, faults, supervisor.kills) for f in report.findings[:10]])


def compactions(supervisor: Supervisor) -> list[int]:
    """[passes that committed a rewrite, passes that ended without error, passes run] of `maintain`."""
    logs = supervisor.logs("maintain")
    done = [e for e in log_events(logs) if e.get("event") == "maintain"]
    return [sum(e.get("version") is not None for e in done), len(done), len(logs)]


def suspects(finding: Finding, versions: Sequence[UploadedVersion], faults: Sequence[FaultRecord],
             kills: Sequence[Kill]) -> str:
    """A finding with the faults that touched its object, and the kills and uncertain commit
    outcomes from its first upload on (within WINDOW_SECONDS)."""
    mine = [v for v in versions if v.key == finding.key]
    start = min((v.uploaded_at for v in mine), default=0.0)
    end = start + WINDOW_SECONDS
    on_object = [f"{f.operation}/{f.fault}@+{f.time - start:.1f}s" for f in faults if f.key == finding.key]
    commits = [f"{f.operation}/{f.fault}@+{f.time - start:.1f}s" for f in faults
               if f.operation in COMMITS and f.applied and start <= f.time <= end]
    killed = [f"{k.name}(ran {k.age_seconds:.0f}s)@+{k.at - start:.1f}s" for k in kills
              if start <= k.at <= end]
    return (f"{finding.kind} {finding.key!r}: {finding.detail}; faults on the object: "
            f"{', '.join(on_object) or 'none'}; uncertain commits: {', '.join(commits[:8]) or 'none'}; "
            f"kills: {', '.join(killed[:8]) or 'none'}")
