"""A Hudi merge prints nothing of the JVM's own to the console at the default ERROR log level.

In a process of its own: JOL, which Hudi sizes merged records with, prints its warnings once per
JVM, so a test inside the shared session would pass whatever lakeinlet did.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.spark.conftest import JARS

pytestmark = [pytest.mark.spark]

# Two upserts of the same keys: the second merges into the first's file group, Hudi's JOL path.
SCRIPT = textwrap.dedent("""
    import sys
    from lakeinlet.incremental.targets import HUDI_CLASS, HUDI_SESSION
    from lakeinlet.incremental.targets.hudi.write_options import DEFAULTS
    from lakeinlet.spark import SparkSection, get_session

    jars, table = sys.argv[1:]
    spark = get_session(SparkSection(master="local[1]", jars=jars, shuffle_partitions=1), None,
                        "hudi-console", ["hudi"], HUDI_SESSION, {"hudi": HUDI_CLASS})
    opts = DEFAULTS | {"hoodie.table.name": "t", "hoodie.datasource.write.operation": "upsert",
                       "hoodie.datasource.write.recordkey.field": "id"}
    for v in ("a", "b"):
        frame = spark.createDataFrame([(1, v), (2, v)], "id bigint, v string")
        frame.write.format("hudi").options(**opts).mode("append").save(table)
    print("rows", spark.read.format("hudi").load(table).count())
""")


def test_a_hudi_merge_prints_no_jvm_warning(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, JARS, f"file://{tmp_path}/t"],
                          capture_output=True, text=True, timeout=300,
                          env=os.environ | {"PYSPARK_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "rows 2", done.stdout
    assert "WARNING" not in done.stdout + done.stderr, done.stdout + done.stderr
