"""Several processes append to one changelog at once (pollers' blind appends and a delta-rs
writer), locally and on S3 (moto, conditional PUT): no commit lost, none doubled, versions
contiguous, every row once."""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.changelog.writer import OpenDeltaChangelog
from tests.conftest import received_rows

pytestmark = pytest.mark.integration

WRITERS, COMMITS, ROWS = 4, 12, 3


def _writer(uri: str, endpoint: str | None, name: str, delta_rs: bool, start: Any,
            out: Any) -> None:
    """One process: wait for the others, then commit COMMITS batches as fast as it can."""
    aws = AwsSection(endpoint_url=endpoint)
    changelog = DeltaChangelog(uri, aws) if delta_rs else OpenDeltaChangelog(uri, aws)
    start.wait(60)
    versions = [changelog.append(received_rows(f"{name}-{i}", ROWS), {"poll_batch": f"{name}-{i}"})
                for i in range(COMMITS)]
    out.put((name, versions))


def test_concurrent_appends_lose_and_double_nothing(
        changelog_location: tuple[str, AwsSection]) -> None:
    uri, aws = changelog_location
    OpenDeltaChangelog(uri, aws).append(received_rows("seed", 1), {"poll_batch": "seed"})
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    names = [f"poller{i}" for i in range(WRITERS)] + ["delta-rs"]
    procs = [ctx.Process(target=_writer, args=(uri, aws.endpoint_url, n, n == "delta-rs", start, out))
             for n in names]
    for p in procs:
        p.start()
    start.set()
    results = dict(out.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    reader = DeltaChangelog(uri, aws)
    expected = {f"{n}-{i}" for n in names for i in range(COMMITS)} | {"seed"}
    commits = reader.commits()
    assert [c.version for c in commits] == list(range(len(expected)))  # contiguous, none lost
    assert sorted(c.metadata["poll_batch"] for c in commits) == sorted(expected)  # none doubled
    by_batch = {c.metadata["poll_batch"]: c.version for c in commits}
    for name, versions in results.items():  # each blind appender returned its own commits'
        if name != "delta-rs":             # versions (delta-rs's writer returns the head after it)
            assert versions == [by_batch[f"{name}-{i}"] for i in range(COMMITS)]
    rows = Counter(pa.table(reader.read_versions(-1)).column("poll_batch").to_pylist())
    assert rows == {b: (1 if b == "seed" else ROWS) for b in expected}
    assert os.path.basename(uri) == "changelog"
