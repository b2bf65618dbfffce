"""`spark-submit incremental/__main__.py run --drain` against moto: the cluster entry point works."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lakeinlet import jars as jarlib
from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from tests.spark.conftest import JARS
from tests.spark.loader_helpers import make_config, new_lake, parts, record, target_rows, upload

pytestmark = [pytest.mark.spark, pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]


def test_spark_submit_runs_the_same_main(aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("json", 3, 2)
    p = parts(make_config(aws, lake, "json"), None)
    record(p.changelog, upload(s3, landing, files))
    submit = Path(sys.executable).parent / "spark-submit"
    jars = ",".join(str(j) for j in jarlib.group_jars(Path(JARS), "s3a"))  # this line's, not every jar there
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    proc = subprocess.run(
        [str(submit), "--master", "local[1]", "--jars", jars, str(ROOT / "incremental" / "__main__.py"),
         "run", "--drain", "--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders",
         "--source-format", "json", "--schema", SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or ""],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "loaded 6 rows in 1 batches" in proc.stdout
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in files for r in f.rows)
    # Without the connector the job stops with one line saying how to get it (no stack trace):
    # under spark-submit lakeinlet adds no jars of its own (LAKEINLET_JARS is not used), so the
    # line names spark-submit's --packages.
    proc = subprocess.run(
        [str(submit), "--master", "local[1]", str(ROOT / "incremental" / "__main__.py"),
         "run", "--drain", "--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/other",
         "--source-format", "json", "--endpoint-url", aws.endpoint_url or ""],
        capture_output=True, text=True, env=env | {"LAKEINLET_JARS": str(ROOT / "tests")}, timeout=300)
    said = proc.stdout + proc.stderr  # spark-submit sends the Python driver's stderr to stdout
    assert proc.returncode == 2, said[-2000:]
    assert "error: Spark cannot load org.apache.hadoop.fs.s3a.S3AFileSystem" in said
    hadoop_aws = jarlib.coordinates("s3a")[0]  # the running Spark line's
    assert f"pass `--packages {hadoop_aws}" in said and "Traceback" not in said
