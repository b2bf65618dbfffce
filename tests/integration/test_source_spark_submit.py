"""`spark-submit sources/__main__.py …` runs the same `main` as `lakeinlet-poll` (driver only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack

pytestmark = [pytest.mark.integration, pytest.mark.engine]

ROOT = Path(__file__).resolve().parents[2]
SPARK_SUBMIT = shutil.which("spark-submit", path=str(Path(sys.executable).parent)) or shutil.which(
    "spark-submit")


@pytest.mark.skipif(SPARK_SUBMIT is None, reason="spark-submit (pyspark) is not installed")
def test_spark_submit_drains_the_queue(stack: Stack, aws: AwsSection, tmp_path: Path) -> None:
    s3 = client("s3", aws)
    for key in ("submit/a b.json", "submit/c+d.json"):
        s3.put_object(Bucket=stack.bucket, Key=key, Body=b"{}")
    uri = str(tmp_path / "cl")
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(SPARK_SUBMIT), "--master", "local[1]", str(ROOT / "sources" / "__main__.py"),
         "--queue-url", stack.queue_url, "--changelog", uri, "--endpoint-url", stack.endpoint,
         "--bucket", stack.bucket, "--until-empty", "--wait-seconds", "1", "--receivers", "1"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    keys = pa.table(DeltaChangelog(uri).read_versions(-1)).column("key").to_pylist()
    assert sorted(keys) == ["submit/a b.json", "submit/c+d.json"]
