"""No secret on the Spark JVM's command line, nor in its SparkConf: the S3 secret key reaches s3a
through the environment, a catalog's password and an s3a key given with --spark-conf are set once
the JVM runs, and s3a still reads and writes against the emulator.

In a process of its own: the JVM's command line is fixed when it starts, so the shared session
(started with other credentials) cannot show it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.spark.conftest import JARS

pytestmark = [pytest.mark.spark]

SCRIPT = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from lakeinlet import jvm
    from lakeinlet.spark import SparkSection, get_session

    jars, endpoint, table = sys.argv[1:]
    canary = os.environ["AWS_SECRET_ACCESS_KEY"]  # not an argument: this process's argv is read too
    given = (f"spark.hadoop.fs.s3a.session.token.probe={canary}",)  # an s3a secret from --spark-conf
    catalog = {"spark.sql.catalog.probe.uri": f"jdbc:postgresql://alice:{canary}@db:5432/cat",
               "spark.sql.catalog.probe.credential": f"client:{canary}"}
    spark = get_session(SparkSection(master="local[1]", jars=jars, shuffle_partitions=1,
                                     spark_conf=given), endpoint, "secrets", ["s3a"], catalog)
    spark.range(5).write.mode("overwrite").parquet(table)
    pid = next(p.name for p in Path("/proc").glob("[0-9]*")  # the gateway JVM: this process's child
               if (p / "stat").is_file() and p.name != str(os.getpid())
               and (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(os.getpid())
               and b"SparkSubmit" in (p / "cmdline").read_bytes())
    hadoop = jvm.hadoop_conf(spark)

    def showing():  # every process whose command line holds the canary (what `ps` shows any user)
        found = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                found += [cmdline.parent.name] if canary.encode() in cmdline.read_bytes() else []
            except OSError:  # gone meanwhile
                pass
        return found

    print(json.dumps({
        "showing": showing(),
        "rows": spark.read.parquet(table).count(),
        "jvm_cmdline": Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"),
        "jvm_environ_has_secret": canary.encode() in Path(f"/proc/{pid}/environ").read_bytes(),
        "spark_conf": dict(spark.sparkContext.getConf().getAll()),
        "held_set": [spark.conf.get(k) == v for k, v in catalog.items()]
                    + [hadoop.get("fs.s3a.session.token.probe") == canary],
        "redaction": spark.sparkContext.getConf().get("spark.redaction.regex"),
    }))
""")


def test_no_secret_on_the_jvm_command_line_and_s3a_still_works(moto_server: MotoServer) -> None:
    canary = f"LEAKCANARY-{uuid.uuid4()}"
    bucket = unique("secrets")
    client("s3", AwsSection(endpoint_url=moto_server.endpoint)).create_bucket(Bucket=bucket)
    env = os.environ | {"PYSPARK_PYTHON": sys.executable, "AWS_SECRET_ACCESS_KEY": canary}
    done = subprocess.run([sys.executable, "-c", SCRIPT, JARS, moto_server.endpoint,
                           f"s3a://{bucket}/t"], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["rows"] == 5  # s3a wrote and read with the key from the environment
    assert seen["jvm_environ_has_secret"]  # the JVM got the key, through its environment
    assert "org.apache.spark.deploy.SparkSubmit" in seen["jvm_cmdline"]
    assert canary not in seen["jvm_cmdline"]
    assert not [k for k, v in seen["spark_conf"].items() if canary in v], seen["spark_conf"].keys()
    assert all(seen["held_set"])  # the held settings are in force all the same
    assert "credential" in seen["redaction"]
    assert seen["showing"] == []  # no process of the machine, while the JVM ran
    assert canary not in done.stderr
