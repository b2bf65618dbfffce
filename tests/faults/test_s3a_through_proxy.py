"""Spark's s3a (AWS SDK v1) through the proxy: its calls are named and a fault is retried.

The proxy is set as this test's bucket's own s3a endpoint (`fs.s3a.bucket.<b>.endpoint`), so the
one SparkSession of the run (the spark tier's, same settings) is shared, never stopped here.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from chaos import FaultPlan, FaultProxy, FaultRule
from lakeinlet import jvm as lakejvm
from lakeinlet.dev.emulator import MotoServer
from lakeinlet.incremental.targets import every_format
from lakeinlet.spark import REQUIRED_CLASSES, SparkSection, get_session
from tests.conftest import unique
from tests.faults.conftest import aws_client
from tests.spark.conftest import JARS

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def spark(moto_server: MotoServer) -> Any:
    """The spark tier's session settings exactly (whichever tier starts first, the other reuses
    it); a missing jar fails with lakeinlet's one-line message, never a skip."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    section = SparkSection(master="local[2]", jars=JARS, shuffle_partitions=2)
    needs = every_format()
    return get_session(section, moto_server.endpoint, "lakeinlet-tests", ["s3a", *needs.groups],
                       needs.conf, REQUIRED_CLASSES | needs.required)


def test_s3a_writes_and_reads_through_the_proxy_and_retries_its_faults(
        spark: Any, proxy: FaultProxy, moto_server: MotoServer) -> None:
    bucket = unique("s3a")
    aws_client("s3", moto_server.endpoint).create_bucket(Bucket=bucket)
    lakejvm.hadoop_conf(spark).set(f"fs.s3a.bucket.{bucket}.endpoint", proxy.endpoint)
    proxy.set_plan(FaultPlan((FaultRule("PutObject", "http_500", nth=(1,)),
                              FaultRule("GetObject", "slow_down_503", nth=(1,)))))
    spark.range(5).write.parquet(f"s3a://{bucket}/t")
    assert spark.read.parquet(f"s3a://{bucket}/t").count() == 5
    assert {(r.operation, r.fault, r.bucket) for r in proxy.faults()} == {
        ("PutObject", "http_500", bucket), ("GetObject", "slow_down_503", bucket)}
    seen = proxy.stats()["requests"]
    # Spark writes to s3a through the S3A magic committer: multipart uploads, no COPY (no renames).
    assert {"HeadObject", "ListObjectsV2", "PutObject", "GetObject", "CompleteMultipartUpload"} <= set(seen)
    assert "CopyObject" not in seen
