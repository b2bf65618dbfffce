"""The Spark session settings: emulator s3a settings only with an endpoint; spark-submit's settings win."""

from __future__ import annotations

from pathlib import Path

import pytest

from lakeinlet import jars as jarlib
from lakeinlet.spark import (
    SparkSection,
    how_to_get_jars,
    jar_list,
    launcher_conf,
    session_conf,
    under_spark_submit,
)

pytestmark = pytest.mark.unit


def test_no_endpoint_means_no_s3a_overrides_and_no_jars() -> None:
    conf = session_conf(SparkSection(), add_jars=False)
    assert not any(k.startswith("spark.hadoop.fs.s3a") for k in conf)
    assert "spark.jars" not in conf
    assert conf["spark.sql.parquet.outputTimestampType"] == "TIMESTAMP_MICROS"


def test_emulator_endpoint_sets_path_style_and_plain_http_but_no_keys(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The keys stay in the environment the JVM inherits (s3a's default chain reads it): a setting
    # would put them on the JVM's command line (tests/spark/test_secrets_off_argv.py).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEYID0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "LEAKCANARY-s3a-secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "LEAKCANARY-s3a-token")
    conf = session_conf(SparkSection(spark_conf=("spark.x=1",)), "http://127.0.0.1:5000", groups=["s3a"])
    pre = "spark.hadoop.fs.s3a."
    assert conf[pre + "endpoint"] == "http://127.0.0.1:5000"
    assert conf[pre + "path.style.access"] == "true" and conf[pre + "connection.ssl.enabled"] == "false"
    assert conf["spark.x"] == "1"
    assert not [k for k, v in conf.items() if "LEAKCANARY" in v or "AKIAEXAMPLE" in v]
    assert pre + "aws.credentials.provider" not in conf  # the default chain, environment included


def test_jar_folders_expand_to_their_jars(tmp_path: Path) -> None:
    (tmp_path / "a.jar").write_bytes(b"")
    (tmp_path / "notes.txt").write_bytes(b"")
    assert jar_list(f"{tmp_path},/x/b.jar") == [str(tmp_path / "a.jar"), "/x/b.jar"]
    assert SparkSection(spark_conf=("bad",)).validate()


def test_a_missing_jar_folder_adds_no_jar_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A fresh clone before `lakeinlet jars`: the default folder does not exist.
    monkeypatch.delenv("LAKEINLET_JARS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "nothing-here"))
    assert "spark.jars" not in session_conf(SparkSection(), groups=["s3a", "hudi"])


def _group_folder(root: Path) -> Path:
    for c in jarlib.groups_of()["s3a"]:
        (root / "s3a").mkdir(parents=True, exist_ok=True)
        (root / "s3a" / jarlib.jar_name(c)).write_bytes(b"")
    return root


def test_spark_submit_settings_win_over_lakeinlets_defaults(tmp_path: Path) -> None:
    given = {"spark.sql.shuffle.partitions": "64", "spark.jars.packages": "g:a:1",
             "spark.sql.extensions": "my.Extension"}
    section = SparkSection(jars=str(_group_folder(tmp_path)))
    extra = {"spark.sql.extensions": "format.Extension", "spark.serializer": "kryo"}
    conf = session_conf(section, groups=["s3a"], extra=extra, given=given)
    assert "spark.sql.shuffle.partitions" not in conf  # spark-submit's 64 stays
    assert "spark.jars" not in conf  # --packages given: lakeinlet adds no jars
    assert conf["spark.sql.extensions"] == "my.Extension,format.Extension"  # merged, the user's first
    assert conf["spark.serializer"] == "kryo"
    again = session_conf(section, extra=extra, given={"spark.sql.extensions": "format.Extension"})
    assert again["spark.sql.extensions"] == "format.Extension"  # not listed twice


def test_jars_are_added_only_outside_spark_submit(tmp_path: Path) -> None:
    section = SparkSection(jars=str(_group_folder(tmp_path)))
    assert "spark.jars" in session_conf(section, groups=["s3a"])
    assert "spark.jars" not in session_conf(section, groups=["s3a"], add_jars=False)
    assert "spark.jars" not in session_conf(section, groups=["s3a"], given={"spark.jars": "/x.jar"})


def test_under_spark_submit_is_the_gateway_spark_submit_started(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert not under_spark_submit() and launcher_conf() == {}
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert under_spark_submit()


def test_the_missing_jar_message_says_what_to_do_where(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LAKEINLET_JARS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert "--packages org.apache.hadoop:hadoop-aws" in how_to_get_jars("s3a", True, None)
    assert "spark-submit" in how_to_get_jars("s3a", True, str(tmp_path))
    folder = jarlib.CACHE_FOLDERS[jarlib.installed_line()]  # each Spark line its own cache folder
    assert f"--dest {tmp_path / 'lakeinlet' / folder} --only s3a" in how_to_get_jars("s3a", False, None)
    assert f"--dest {tmp_path} --only s3a" in how_to_get_jars("s3a", False, str(tmp_path))
    said = how_to_get_jars("s3a", False, "/x/a.jar,/x/b.jar")
    assert "holds no jar of org.apache.hadoop:hadoop-aws" in said


def test_writes_to_s3a_go_through_the_magic_committer_unless_told_otherwise() -> None:
    protocol = "spark.sql.sources.commitProtocolClass"
    assert session_conf(SparkSection(), groups=["s3a"], add_jars=False)[protocol].endswith(
        "PathOutputCommitProtocol")
    assert protocol not in session_conf(SparkSection(), groups=[], add_jars=False)  # s3 on EMR, local
    assert protocol not in session_conf(SparkSection(), groups=["s3a"], add_jars=False, committers=False)
    mine = {protocol: "my.Protocol"}
    assert protocol not in session_conf(SparkSection(), groups=["s3a"], given=mine)  # spark-submit's wins


def test_the_packages_line_leaves_out_what_spark_hadoop_cloud_drags_in() -> None:
    flags = jarlib.submit_flags(["s3a"], "3.5").split()
    assert flags[0] == "--packages" and "org.apache.spark:spark-hadoop-cloud_2.12" in flags[1]
    assert flags[2] == "--exclude-packages" and "org.apache.hadoop:hadoop-azure" in flags[3]
    assert jarlib.submit_flags(["hudi"], "3.5").split()[2:] == []  # a bundle needs no exclusion


def test_a_session_on_an_unsupported_spark_or_without_its_format_stops_with_one_line() -> None:
    from lakeinlet.errors import TerminalError
    from lakeinlet.spark import spark_line

    assert spark_line(["s3a", "iceberg"], "4.1.4") == "4.1"
    assert spark_line(["s3a", "hudi"], "3.5.9") == "3.5"
    with pytest.raises(TerminalError, match=r"^Hudi publishes no Spark 4 bundle on Maven Central"):
        spark_line(["s3a", "hudi"], "4.1.4")
    with pytest.raises(TerminalError, match=r"^Spark 4\.0\.1 is not supported"):
        spark_line([], "4.0.1")


def test_dates_are_read_and_written_exactly_unless_spark_submit_or_spark_conf_says_otherwise() -> None:
    keys = {f"spark.sql.parquet.{k}RebaseModeIn{w}" for k in ("datetime", "int96") for w in ("Read", "Write")}
    keys |= {f"spark.sql.avro.datetimeRebaseModeIn{w}" for w in ("Read", "Write")}
    assert {k: session_conf(SparkSection()).get(k) for k in keys} == dict.fromkeys(keys, "CORRECTED")
    given = {"spark.sql.parquet.datetimeRebaseModeInRead": "LEGACY"}
    assert "spark.sql.parquet.datetimeRebaseModeInRead" not in session_conf(SparkSection(), given=given)
    mine = SparkSection(spark_conf=("spark.sql.avro.datetimeRebaseModeInWrite=LEGACY",))
    assert session_conf(mine)["spark.sql.avro.datetimeRebaseModeInWrite"] == "LEGACY"
