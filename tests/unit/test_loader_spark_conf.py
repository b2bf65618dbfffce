"""The Spark session settings: s3a emulator settings only with an endpoint; jars only when given."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet.spark import SparkSection, jar_list, session_conf

pytestmark = pytest.mark.unit


def test_no_endpoint_means_no_s3a_overrides_and_no_jars() -> None:
    conf = session_conf(SparkSection())
    assert not any(k.startswith("spark.hadoop.fs.s3a") for k in conf)
    assert "spark.jars" not in conf
    assert conf["spark.sql.parquet.outputTimestampType"] == "TIMESTAMP_MICROS"


def test_emulator_endpoint_sets_path_style_plain_http_and_static_keys(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s")
    conf = session_conf(SparkSection(spark_conf=("spark.x=1",)), "http://127.0.0.1:5000")
    pre = "spark.hadoop.fs.s3a."
    assert conf[pre + "endpoint"] == "http://127.0.0.1:5000"
    assert conf[pre + "path.style.access"] == "true" and conf[pre + "connection.ssl.enabled"] == "false"
    assert conf[pre + "aws.credentials.provider"].endswith("SimpleAWSCredentialsProvider")
    assert conf["spark.x"] == "1"


def test_jar_folders_expand_to_their_jars(tmp_path: Path) -> None:
    (tmp_path / "a.jar").write_bytes(b"")
    (tmp_path / "notes.txt").write_bytes(b"")
    assert jar_list(f"{tmp_path},/x/b.jar") == [str(tmp_path / "a.jar"), "/x/b.jar"]
    assert SparkSection(spark_conf=("bad",)).validate()
