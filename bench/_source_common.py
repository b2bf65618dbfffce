"""Shared pieces of the event-source benchmarks: message bodies, CPU/RSS/load readings, a
changelog that commits nothing, and the median of repeated figures."""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
from pathlib import Path
from urllib.parse import quote_plus

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lakeinlet.events import ReceivedEvent  # noqa: E402

TEMPLATE = json.loads((ROOT / "tests" / "data" / "events" / "moto_put.json").read_text())
WORK = ROOT / ".bench"


def bodies(n: int, start: int = 0, bucket: str | None = None) -> list[str]:
    """`n` real-shaped S3 notification bodies (moto's shape), distinct keys and etags."""
    rec = TEMPLATE["Records"][0]
    s3 = rec["s3"] if bucket is None else rec["s3"] | {"bucket": {"name": bucket,
                                                                  "arn": f"arn:aws:s3:::{bucket}"}}
    out = []
    for i in range(start, start + n):
        obj = s3["object"] | {"key": quote_plus(f"bench/{i:07d} file+x.json"), "eTag": f"{i:032x}"}
        out.append(json.dumps({"Records": [rec | {"s3": s3 | {"object": obj}}]}))
    return out


class NullChangelog:
    """Commits nothing: isolates the poller's own cost from Delta's."""

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        return 0


def cpu_seconds(children: bool = False) -> float:
    """User + system CPU seconds of this process (or of its waited-for children)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_rss_mb() -> float:
    """Peak resident set size of this process, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    """The machine's load averages (1, 5, 15 min), for the printed tables."""
    one, five, fifteen = os.getloadavg()
    return f"load avg {one:.2f} {five:.2f} {fifteen:.2f} ({os.cpu_count()} cpus)"


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")
