"""infra/README.md's standalone-cluster commands, run as written on a standalone cluster (two workers
on 127.0.0.1) from a folder outside the checkout with the installed wheel, per target format: end to
end, an executor JVM killed during a load, the driver killed and the load run again. Rows exact."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.emulator import MotoServer, Stack, provision
from lakeinlet.samples import SampleFile, make_files
from tests.cluster.conftest import Results, Row, Submitter
from tests.cluster.standalone import StandaloneCluster, _kill_group
from tests.cluster.target import LINEAGE, read_target
from tests.conftest import unique

pytestmark = pytest.mark.cluster
FORMATS = ("delta", "hudi", "iceberg")
TABLES = {"delta": "orders", "hudi": "orders_hudi", "iceberg": "orders_iceberg"}


@dataclass
class Lake:
    """One scenario's landing stack (bucket → queue), lake bucket and uploaded objects."""

    stack: Stack
    lake: str
    tmp: Path
    files: list[SampleFile]
    etags: dict[str, str]

    def variables(self) -> dict[str, str]:
        return {"QUEUE_URL": self.stack.queue_url, "LAKE": self.lake, "ICEBERG_CATALOG": "jdbc",
                "ICEBERG_CATALOG_URI": f"jdbc:sqlite:{self.catalog_db}"}

    @property
    def catalog_db(self) -> Path:
        return self.tmp / "iceberg-catalog.db"

    def table_uri(self, target_format: str) -> str:
        return f"s3://{self.lake}/{TABLES[target_format]}"


def new_lake(moto_server: MotoServer, tmp: Path, files: int, rows: int) -> Lake:
    stack = provision(moto_server.endpoint, bucket=unique("land"), queue=unique("events"))
    s3 = client("s3", AwsSection(endpoint_url=moto_server.endpoint))
    lake = unique("lake")
    s3.create_bucket(Bucket=lake)
    samples = make_files("json", files, rows)
    etags = {f.key: s3.put_object(Bucket=stack.bucket, Key=f.key, Body=f.body)["ETag"].strip('"')
             for f in samples}
    return Lake(stack, lake, tmp, samples, etags)


def poll(submitter: Submitter, lake: Lake) -> None:
    done = submitter.run(submitter.flow.script(submitter.flow.poll), **lake.variables())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def check_rows(lake: Lake, target_format: str, endpoint: str) -> int:
    """The target holds every uploaded row exactly once, with its lineage; returns the row count."""
    got = read_target(target_format, lake.table_uri(target_format), endpoint, str(lake.catalog_db))
    expected = sorted(r["order_id"] for f in lake.files for r in f.rows)
    assert got.num_rows, f"the {target_format} table {lake.table_uri(target_format)} holds no rows"
    assert sorted(got.column("order_id").to_pylist()) == expected
    missing = [c for c in LINEAGE if c not in got.column_names]
    assert not missing, f"lineage columns missing from the {target_format} table: {missing}"
    pairs = set(zip(got.column("_source_key").to_pylist(), got.column("_source_etag").to_pylist(), strict=True))
    assert pairs == set(lake.etags.items())
    assert set(got.column("_source_bucket").to_pylist()) == {lake.stack.bucket}
    assert None not in got.column("_ingest_batch").to_pylist()
    assert None not in got.column("_source_event_time").to_pylist()
    return int(got.num_rows)


def python_workers(cluster: StandaloneCluster, app_ids: list[str]) -> int:
    """Python tasks the applications' executors ran (PythonRunner logs one `Times:` line per task)."""
    logs = [p for n in range(cluster.workers) for a in app_ids
            for p in (cluster.work_dir(n) / a).glob("*/stderr")]
    return sum(p.read_text(errors="replace").count("Times: total") for p in logs)


def apps_since(cluster: StandaloneCluster, before: set[str]) -> list[str]:
    return sorted({p.name for n in range(cluster.workers) for p in cluster.work_dir(n).glob("app-*")} - before)


def all_apps(cluster: StandaloneCluster) -> set[str]:
    return set(apps_since(cluster, set()))


def timed(step: Callable[[], None]) -> float:
    t0 = time.monotonic()
    step()
    return time.monotonic() - t0


def load(submitter: Submitter, lake: Lake, target_format: str, archive: bool) -> None:
    done = submitter.run(submitter.flow.script(submitter.flow.load(target_format, archive)), **lake.variables())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "loaded" in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize(("target_format", "archive"),
                         [("delta", True), ("delta", False), ("hudi", False), ("iceberg", False)])
def test_end_to_end(target_format: str, archive: bool, submitter: Submitter, moto_server: MotoServer,
                    standalone: StandaloneCluster, results: Results, tmp_path: Path,
                    request: pytest.FixtureRequest) -> None:
    if archive:
        request.getfixturevalue("packed_env")
    lake = new_lake(moto_server, tmp_path, files=4, rows=5)
    poll_s = timed(lambda: poll(submitter, lake))
    before = all_apps(standalone)
    load_s = timed(lambda: load(submitter, lake, target_format, archive))
    found = check_rows(lake, target_format, moto_server.endpoint)
    workers = python_workers(standalone, apps_since(standalone, before))
    results.rows.append(Row(target_format, f"end to end ({'archive' if archive else 'venv path'})",
                            sum(len(f.rows) for f in lake.files), found, poll_s + load_s,
                            f"poll {poll_s:.1f} s + load {load_s:.1f} s; python tasks on executors: {workers}"))
