"""The campaign table: one line per run and a total, faults by kind per target format, and every
finding with its suspects."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence

from chaos.plan import FAULT_KINDS
from chaos.run_result import RunResult

CRAFTED = ("duplicate", "reordered")
COLUMNS = ("run", "target", "source", "chaos s", "objects", "versions", "crafted", "faults", "uncertain",
           "kills p/l", "exits", "commits cl/tgt", "batches", "conflicts", "maint c/ok/n", "expected",
           "found", "lost", "dup", "unexp", "verdict")


def machine_load() -> str:
    """`cores N, load a b c` (1, 5 and 15 minute averages)."""
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} cores, load {one:.2f} {five:.2f} {fifteen:.2f}"


def _row(r: RunResult) -> list[object]:
    rep = r.report
    verdict = "ok" if r.ok else ",".join(sorted(rep.kinds())) or "no convergence"
    crafted = "/".join(str(r.crafted.get(k, 0)) for k in CRAFTED)
    return [str(r.index), r.target_format, r.source_format, f"{r.seconds.get('chaos', 0):.0f}",
            str(r.objects), str(r.versions), crafted, str(sum(r.faults.values())), str(r.uncertain),
            f"{r.kills.get('poller', 0)}/{r.kills.get('loader', 0)}", str(sum(r.exits.values())),
            f"{r.changelog_commits}/{r.target_commits}", str(r.loader_batches),
            str(r.conflicts + r.lease_waits), "/".join(map(str, r.compactions)), str(rep.expected),
            str(rep.found), str(rep.lost),
            str(rep.duplicated), str(rep.unexpected), verdict]


def _total(results: Sequence[RunResult]) -> list[object]:
    def s(f: str) -> int:
        return sum(int(getattr(r, f)) for r in results)

    def rep(f: str) -> int:
        return sum(int(getattr(r.report, f)) for r in results)

    kills = Counter[str]()
    for r in results:
        kills.update(r.kills)
    crafted = "/".join(str(sum(r.crafted.get(k, 0) for r in results)) for k in CRAFTED)
    return ["all", "-", "-", f"{sum(r.seconds.get('chaos', 0) for r in results):.0f}", s("objects"),
            s("versions"), crafted,
            str(sum(sum(r.faults.values()) for r in results)), s("uncertain"),
            f"{kills['poller']}/{kills['loader']}", str(sum(sum(r.exits.values()) for r in results)),
            f"{s('changelog_commits')}/{s('target_commits')}", s("loader_batches"),
            str(s("conflicts") + s("lease_waits")),
            "/".join(str(sum(r.compactions[i] for r in results)) for i in range(3)), rep("expected"),
            rep("found"), rep("lost"),
            rep("duplicated"), rep("unexpected"), "ok" if all(r.ok for r in results) else "FAILED"]


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> list[str]:
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in cells]


def faults_by_kind(results: Sequence[RunResult]) -> list[str]:
    formats = sorted({r.target_format for r in results})
    rows = []
    for kind in FAULT_KINDS:
        per = [sum(r.faults.get(kind, 0) for r in results if r.target_format == f) for f in formats]
        rows.append([kind, *per, sum(per)])
    totals = [sum(r.faults.get(k, 0) for r in results for k in FAULT_KINDS if r.target_format == f)
              for f in formats]
    return table([*rows, ["all", *totals, sum(totals)]], ["fault kind", *formats, "total"])


def faults_by_operation(results: Sequence[RunResult]) -> list[str]:
    ops = Counter[str]()
    for r in results:
        ops.update(r.faults_by_operation)
    return table(ops.most_common(), ["operation", "faults"])


def render(results: Sequence[RunResult], header: str) -> str:
    """The whole campaign report as text."""
    lines = [header, "", *table([*map(_row, results), _total(results)], COLUMNS), "",
             *faults_by_kind(results), "", *faults_by_operation(results), ""]
    exits = Counter[str]()
    for r in results:
        exits.update(r.exits)
    if exits:
        lines.append("jobs that exited on their own (kind:code): " + ", ".join(
            f"{k} {v}" for k, v in sorted(exits.items())))
    for r in results:
        for s in r.suspects:
            lines.append(f"run {r.index} {r.target_format}: {s}")
        if not r.converged:
            lines.append(f"run {r.index} {r.target_format}: did not converge (see its clean-*.log)")
    return "\n".join(lines)
