"""Where the landing-zone bench's time goes: requests counted from the moto server's access log
(by operation and bucket), queue calls counted at the port, Spark jobs from the status tracker."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lakeinlet.sources.ports import EntryFailure, Message, Queue

LINE = re.compile(r'"(GET|HEAD|PUT|POST|DELETE) (/[^ ]*) HTTP/[0-9.]+" (\d{3})')


def operation(method: str, path: str) -> str:
    """The S3 (or SQS) operation an access-log line names, coarsely: what it costs, not its name."""
    if method == "POST" and path == "/":
        return "SQS"
    bucket_only = "/" not in path.lstrip("/").split("?", 1)[0]
    if method == "GET" and ("list-type" in path or bucket_only):
        return "LIST"
    if method == "POST":
        return "DELETE" if "?delete" in path else "POST"
    return method


@dataclass(frozen=True)
class Tally:
    """One phase's requests: per (bucket role, operation), and the Spark jobs it ran."""

    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    jobs: int = 0

    def of(self, role: str, op: str) -> int:
        return self.requests[(role, op)]


class RequestLog:
    """The moto server's access log, read from a mark: each request's operation and bucket."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def since(self, mark: int, landing: str, jobs: int = 0) -> Tally:
        """The requests logged after `mark`: bucket `landing` counts as "landing", others "lake"."""
        time.sleep(0.2)  # the server writes its line after it answers
        if not self.path.exists():
            return Tally(Counter(), jobs)
        with self.path.open("rb") as f:
            f.seek(mark)
            text = f.read().decode(errors="replace")
        out: Counter[tuple[str, str]] = Counter()
        for method, path, _ in LINE.findall(text):
            op = operation(method, path)
            bucket = path.lstrip("/").split("/", 1)[0].split("?", 1)[0]
            out[("sqs" if op == "SQS" else "landing" if bucket == landing else "lake", op)] += 1
        return Tally(out, jobs)


def jobs_so_far(spark: Any) -> int:
    """Spark jobs started so far (the highest job id + 1; no job group is set by lakeinlet)."""
    ids = spark.sparkContext.statusTracker().getJobIdsForGroup(None)
    return max(ids, default=-1) + 1


class CountingQueue:
    """Wraps a queue port: counts receives (and the messages they bring), deletes and visibility calls."""

    def __init__(self, inner: Queue) -> None:
        self.inner, self.calls = inner, Counter[str]()

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        got = self.inner.receive(max_messages, wait_seconds, visibility_timeout)
        self.calls["receive"] += 1
        self.calls["empty receive"] += not got
        return got

    def change_visibility(self, handles: Sequence[str], timeout: int) -> list[EntryFailure]:
        self.calls["change visibility"] += 1
        return self.inner.change_visibility(handles, timeout)

    def delete(self, handles: Sequence[str]) -> list[EntryFailure]:
        self.calls["delete"] += 1
        return self.inner.delete(handles)

    def depths(self) -> Any:
        return self.inner.depths()


def spent_lines(tallies: dict[str, Tally], steps: dict[str, float], poll: Any, queue: Counter[str],
                objects: int) -> list[str]:
    """The profile printed under the figures: requests per data object, queue calls per message,
    Spark jobs, and the loader's steps by time."""
    out = []
    for phase, t in tallies.items():
        ops = ", ".join(f"{role} {op} {n} ({n / objects:.2f}/object)"
                        for (role, op), n in sorted(t.requests.items()) if role != "sqs")
        sqs = t.of("sqs", "SQS")
        out.append(f"{phase}: {t.jobs} Spark jobs; S3: {ops or 'none'}; SQS requests {sqs}")
    if poll is not None:
        calls = ", ".join(f"{k} {v}" for k, v in sorted(queue.items()))
        out.append(f"poll: {poll.messages} messages, {poll.batches} batches, {poll.commits} changelog "
                   f"commits; queue calls: {calls}")
    for name, seconds in sorted(steps.items(), key=lambda kv: -kv[1]):
        out.append(f"load step {name:<36} {seconds:>7.2f} s")
    return out
