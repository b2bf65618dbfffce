"""A Delta batch's Spark write to s3a issues no COPY with the S3A magic committer (no renames).

The spark tier's one session points s3a at moto directly, so the measured write runs in a child
process (`_child`) with its own local[1] session whose s3a endpoint is a counting proxy in front
of moto; the Delta target's own listing goes to moto directly, so the proxy counts Spark's write
alone. A control run with Spark's default committer must show COPYs.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chaos import FaultPlan, FaultProxy
from chaos.jobs import job_env
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.faults.conftest import aws_client
from tests.spark.conftest import JARS

ROOT = Path(__file__).resolve().parents[2]
ROWS, PARTITIONS, TASKS = 60, 3, 2
"""The rows come in TASKS Spark tasks; file sizing writes one file per partition value."""

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _child(spark_endpoint: str, moto_endpoint: str, mode: str, table: str, local: str) -> None:
    """Write one batch as DeltaTarget does, to s3a and to a local path; print what was listed."""
    from lakeinlet.aws import AwsSection
    from lakeinlet.committers import default_committer_conf, s3a_committer_conf
    from lakeinlet.incremental.targets.delta.target import DeltaTarget
    from lakeinlet.spark import SparkSection, get_session

    conf = s3a_committer_conf() if mode == "magic" else default_committer_conf()
    jars = os.environ.get("LAKEINLET_JARS") or str(ROOT / ".jars")
    section = SparkSection(master="local[1]", jars=jars, shuffle_partitions=1,  # --spark-conf: wins
                           spark_conf=tuple(f"{k}={v}" for k, v in conf.items()))
    spark = get_session(section, spark_endpoint, "s3a-committer", ["s3a"])
    df = spark.range(ROWS).selectExpr("id", f"cast(id % {PARTITIONS} as string) as day").repartition(TASKS)
    out = {}
    for name, uri in (("s3", table), ("local", local)):
        target = DeltaTarget(uri, AwsSection(endpoint_url=moto_endpoint), "app", ["day"])
        out[name] = [(f.path, json.loads(f.stats)["numRecords"]) for f in target._write(df, "b1", ROWS)]
    print(json.dumps(out))


@pytest.fixture(scope="module")
def counting_proxy(moto_server: MotoServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with FaultProxy(moto_server.endpoint, FaultPlan(), 0, tmp_path_factory.mktemp("proxy") / "f.jsonl") as p:
        yield p


def write_batch(proxy: FaultProxy, moto: MotoServer, mode: str, tmp: Path) -> tuple[Counter[str], Any, str]:
    """Run the child; (requests the proxy counted, the files the target listed, the bucket)."""
    bucket = unique("commit")
    aws_client("s3", moto.endpoint).create_bucket(Bucket=bucket)
    before = Counter(proxy.stats()["requests"])
    args = [proxy.endpoint, moto.endpoint, mode, f"s3://{bucket}/t", str(tmp / "local")]
    argv = [sys.executable, "-c", f"from tests.spark.test_s3a_committer import _child; _child(*{args!r})"]
    done = subprocess.run(argv, env=job_env(JARS) | {"PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = json.loads(done.stdout.strip().splitlines()[-1])
    return Counter(proxy.stats()["requests"]) - before, listed, bucket


def test_magic_committer_writes_a_batch_without_copy_and_every_file_is_readable(
        counting_proxy: FaultProxy, moto_server: MotoServer, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    requests, listed, bucket = write_batch(counting_proxy, moto_server, "magic", tmp_path)
    assert requests["CopyObject"] == 0, dict(requests)
    s3 = aws_client("s3", moto_server.endpoint)
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    data = {k for k in keys if k.endswith(".parquet")}
    assert len(data) == PARTITIONS and requests["CompleteMultipartUpload"] == len(data)
    assert sorted(f"t/{p}" for p, _ in listed["s3"]) == sorted(data)
    assert not any("__magic" in k for k in keys)
    assert not s3.list_multipart_uploads(Bucket=bucket).get("Uploads")
    rows = sum(pq.read_table(io.BytesIO(s3.get_object(Bucket=bucket, Key=k)["Body"].read())).num_rows
               for k in data)
    assert rows == sum(n for _, n in listed["s3"]) == ROWS
    manifest = json.loads(s3.get_object(Bucket=bucket, Key="t/data/b1/_SUCCESS")["Body"].read())
    assert manifest["committer"] == "magic"
    assert sum(n for _, n in listed["local"]) == ROWS  # a local path keeps its own committer


def test_control_the_default_committer_renames_by_copy(
        counting_proxy: FaultProxy, moto_server: MotoServer, tmp_path: Path) -> None:
    """Without this the test above could pass by counting nothing."""
    requests, listed, _ = write_batch(counting_proxy, moto_server, "default", tmp_path)
    assert requests["CopyObject"] >= len(listed["s3"]) == PARTITIONS, dict(requests)
