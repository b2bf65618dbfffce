"""Jar fetching: one catalogue of Maven coordinates, Maven as the client, clear errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import lakeinlet
from lakeinlet import jars
from lakeinlet.spark import SparkSection, jar_list, session_conf

pytestmark = pytest.mark.unit


def fake_mvn(tmp_path: Path, body: str) -> str:
    path = tmp_path / "mvn"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_maven_failure_is_one_clear_error_and_leaves_no_partial_group(tmp_path: Path) -> None:
    mvn = fake_mvn(tmp_path, "echo 'Could not transfer artifact: Connection refused' >&2; exit 1\n")
    with pytest.raises(jars.JarsUnavailable, match=r"is Maven Central reachable.*Connection refused"):
        jars.fetch(tmp_path / "jars", "iceberg", mvn=mvn)
    assert jars.group_jars(tmp_path / "jars", "iceberg") == []


def test_no_maven_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(jars.JarsUnavailable, match="Maven \\(mvn\\) is needed"):
        jars.fetch(tmp_path / "jars", "s3a")


def test_fetch_copies_what_maven_resolved_and_is_idempotent(tmp_path: Path) -> None:
    # The fake Maven "resolves" by writing each jar into -DoutputDirectory, and counts its calls.
    names = " ".join(jars.jar_name(c) for c in jars.groups_of()["s3a"])
    mvn = fake_mvn(tmp_path, f'echo x >> {tmp_path}/calls\nfor a in "$@"; do case "$a" in '
                             f'-DoutputDirectory=*) d="${{a#-DoutputDirectory=}}";; esac; done\n'
                             f'mkdir -p "$d"; for n in {names}; do echo jar > "$d/$n"; done\n')
    dest = tmp_path / "jars"
    first = jars.fetch(dest, "s3a", mvn=mvn)
    again = jars.fetch(dest, "s3a", mvn=mvn)
    want = [jars.jar_name(c) for c in jars.groups_of()["s3a"]]
    assert [p.name for p in first] == want == [p.name for p in again]
    assert (tmp_path / "calls").read_text().count("x") == 1


def test_packages_line_lists_the_coordinates_spark_submit_resolves() -> None:
    line = jars.packages(["s3a", "iceberg"], "3.5")
    assert line.split(",")[:2] == ["org.apache.hadoop:hadoop-aws:3.3.4",
                                   "com.amazonaws:aws-java-sdk-bundle:1.12.782"]
    assert any(c.startswith("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:") for c in line.split(","))
    assert jars.main(["--packages", "--only", "hudi", "--spark", "3.5"]) == 0


def test_spark_4_takes_scala_2_13_hadoop_3_4_jars_and_has_no_hudi(capsys: pytest.CaptureFixture[str]) -> None:
    line = jars.packages(["s3a", "iceberg"], "4.1").split(",")
    assert line[:2] == ["org.apache.hadoop:hadoop-aws:3.4.2", "software.amazon.awssdk:bundle:2.29.52"]
    assert all("_2.12" not in c for c in line) and any("iceberg-spark-runtime-4.1_2.13" in c for c in line)
    excluded = jars.submit_flags(["s3a"], "4.1").split()[3].split(",")
    assert {"com.huaweicloud:esdk-obs-java", "com.fasterxml.jackson.core:jackson-core"} <= set(excluded)
    assert "com.huaweicloud:esdk-obs-java" not in jars.submit_flags(["s3a"], "3.5")
    assert jars.main(["--only", "hudi", "--spark", "4.1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "lakeinlet jars: Hudi publishes no Spark 4 bundle on Maven Central: Hudi tables need Spark 3.5 "
        "(a virtualenv with lakeinlet's spark35 extra: "
        f"pip install '{lakeinlet.wheel()}[spark35]')"]
    assert jars.main(["--packages", "--spark", "4.1"]) == 0  # the line's runtime groups: s3a, iceberg
    assert "hudi" not in capsys.readouterr().out


@pytest.mark.parametrize(("version", "line"), [("3.5.9", "3.5"), ("3.5.0", "3.5"), ("4.1.4", "4.1")])
def test_a_spark_version_maps_to_its_line(version: str, line: str) -> None:
    assert jars.line_of(version) == line


@pytest.mark.parametrize("version", ["3.4.4", "4.0.1", "4.2.0"])
def test_an_unsupported_spark_is_one_error_naming_the_lines(version: str) -> None:
    with pytest.raises(jars.UnsupportedSpark, match=rf"Spark {version} is not supported: lakeinlet runs on "
                                                    r"Spark 3\.5\.x or 4\.1\.x"):
        jars.line_of(version)


def test_both_lines_jars_share_a_folder_without_mixing(tmp_path: Path) -> None:
    for line in ("3.5", "4.1"):
        (tmp_path / "s3a").mkdir(exist_ok=True)
        for c in jars.coordinates("s3a", line):
            (tmp_path / "s3a" / jars.jar_name(c)).write_bytes(b"")
    for line in ("3.5", "4.1"):
        assert [p.name for p in jars.group_jars(tmp_path, "s3a", line)] == [
            jars.jar_name(c) for c in jars.coordinates("s3a", line)]


def test_default_dir_is_the_user_cache_unless_the_environment_says(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LAKEINLET_JARS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jars.default_dir("3.5") == tmp_path / "lakeinlet" / "jars"  # not the checkout, not the cwd
    # each line its own folder: the 4.1 line's jars never land beside the 3.5 line's (as make test-spark4)
    assert jars.default_dir("4.1") == tmp_path / "lakeinlet" / "jars-spark4"
    assert jars.default_dir() == jars.default_dir(jars.installed_line())
    monkeypatch.setenv("LAKEINLET_JARS", "/x/jars")
    assert jars.default_dir() == jars.default_dir("4.1") == Path("/x/jars")


def test_a_group_folder_gives_only_the_groups_a_run_needs(tmp_path: Path) -> None:
    for group in ("s3a", "iceberg"):
        for c in jars.groups_of()[group]:
            (tmp_path / group).mkdir(exist_ok=True)
            (tmp_path / group / jars.jar_name(c)).write_bytes(b"")
    assert {Path(p).parent.name for p in jar_list(str(tmp_path), ["s3a"])} == {"s3a"}
    assert jar_list(str(tmp_path), []) == []
    conf = session_conf(SparkSection(jars=str(tmp_path)), groups=["s3a", "iceberg"])
    groups = jars.groups_of()
    assert len(conf["spark.jars"].split(",")) == len(groups["s3a"]) + len(groups["iceberg"])


def test_spark_logging_is_quiet_by_default_and_a_flag_brings_it_back() -> None:
    quiet = session_conf(SparkSection())
    assert quiet["spark.ui.showConsoleProgress"] == "false"
    config = quiet["spark.driver.extraJavaOptions"].split("=", 1)[1]
    assert "rootLogger.level = error" in Path(config).read_text()
    loud = session_conf(SparkSection(spark_log_level="INFO"))
    assert loud["spark.ui.showConsoleProgress"] == "true"
    assert os.path.basename(loud["spark.driver.extraJavaOptions"]).endswith("info.properties")


def test_no_bundle_with_known_advisories_and_wildfly_only_when_asked(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # aws-java-sdk-bundle 1.12.262 shades netty 4.1.77, jackson-databind 2.12.6.1 and ion-java 1.0.2;
    # wildfly-openssl 1.0.7.Final has CVE-2020-25644 and cannot load OpenSSL 3.
    every = {c for line in jars.LINES.values() for group in line.values() for c in group}
    assert not every & {"com.amazonaws:aws-java-sdk-bundle:1.12.262",
                        "org.wildfly.openssl:wildfly-openssl:1.0.7.Final"}
    for line in jars.LINES:
        assert not [c for c in jars.coordinates("s3a", line) if "wildfly" in c]
        flags = jars.submit_flags(["s3a"], line)
        assert flags.endswith("org.wildfly.openssl:wildfly-openssl")  # nor pulled in by hadoop-aws
        asked = jars.submit_flags(["s3a", "s3a-openssl"], line)
        assert "wildfly-openssl:2.2.5.Final" in asked and not asked.endswith("wildfly-openssl")
    fetched: list[str] = []
    monkeypatch.setattr(jars, "fetch", lambda dest, group, line=None: fetched.append(group) or [])
    assert jars.main(["--dest", str(tmp_path), "--spark", "3.5"]) == 0
    assert "s3a" in fetched and "s3a-openssl" not in fetched
    assert jars.main(["--dest", str(tmp_path), "--spark", "3.5", "--only", "s3a-openssl"]) == 0
    assert fetched[-1] == "s3a-openssl"


def test_the_iceberg_group_carries_a_driver_for_each_jdbc_catalog_the_docs_name() -> None:
    for line in jars.LINES:
        drivers = [c.rsplit(":", 1)[0] for c in jars.coordinates("iceberg", line)]
        assert {"org.xerial:sqlite-jdbc", "org.postgresql:postgresql"} <= set(drivers)
