"""Secrets never reach the Spark JVM's command line: settings that carry one are held back from the
launch and set in the running JVM; Spark's redaction regex covers the catalog's secrets too, the
user's own regex kept."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog, IcebergSection
from lakeinlet.spark import SparkSection, session_conf
from lakeinlet.spark_secrets import REDACTION, REDACTION_KEY, launch_settings, set_running

pytestmark = pytest.mark.unit

LEAK = "LEAKCANARY-spark"


def _catalog_conf() -> dict[str, str]:
    section = IcebergSection(iceberg_catalog_uri=f"jdbc:postgresql://alice:{LEAK}@db:5432/cat",
                             iceberg_catalog_option=(f"jdbc.password={LEAK}", "jdbc.user=alice"))
    rest = IcebergSection(iceberg_catalog="rest", iceberg_catalog_name="rest",
                          iceberg_catalog_uri=f"https://svc:{LEAK}@rest.example/v1",
                          iceberg_catalog_option=(f"credential=client:{LEAK}", f"token={LEAK}"))
    return (IcebergCatalog(section, "s3a://lake/t", AwsSection()).spark_conf()
            | IcebergCatalog(rest, "s3a://lake/t", AwsSection()).spark_conf())


def test_settings_carrying_a_secret_are_held_back_from_the_launch() -> None:
    section = SparkSection(spark_conf=(f"spark.hadoop.fs.s3a.secret.key={LEAK}", "spark.x=1"))
    conf = session_conf(section, "http://127.0.0.1:5000", ["s3a"], _catalog_conf(), add_jars=False)
    launch, held = launch_settings(conf, submitted=False)
    assert not [k for k, v in launch.items() if LEAK in v]
    assert {k for k, v in conf.items() if LEAK in v} == set(held)
    assert len(held) == 6  # the s3a key, the jdbc uri and password, the rest uri, credential and token
    assert launch["spark.x"] == "1" and launch["spark.sql.catalog.lakeinlet.jdbc.user"] == "alice"
    assert REDACTION_KEY in launch  # the regex itself is no secret: Spark needs it at start
    assert launch_settings(conf, submitted=True) == (conf, {})  # spark-submit's JVM already runs


class FakeHadoop:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def set(self, key: str, value: str) -> None:
        self.values[key] = value


class FakeConf:
    def __init__(self, static: set[str]) -> None:
        self.values: dict[str, str] = {}
        self.static = static

    def set(self, key: str, value: str) -> None:
        if key in self.static:
            raise RuntimeError(f"Cannot modify the value of a static config: {key}")
        self.values[key] = value


class FakeSession:
    def __init__(self, static: set[str] | None = None) -> None:
        self.conf = FakeConf(static or set())
        self.hadoop = FakeHadoop()


def test_held_settings_are_set_in_the_running_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lakeinlet.jvm.hadoop_conf", lambda s: s.hadoop)
    session: Any = FakeSession()
    set_running(session, {"spark.hadoop.fs.s3a.secret.key": LEAK, "spark.sql.catalog.c.uri": "u"})
    assert session.hadoop.values == {"fs.s3a.secret.key": LEAK}
    assert session.conf.values == {"spark.sql.catalog.c.uri": "u"}


def test_a_secret_spark_reads_only_at_start_stops_with_one_line_that_hides_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lakeinlet.jvm.hadoop_conf", lambda s: s.hadoop)
    session: Any = FakeSession(static={"spark.ssl.keyPassword"})
    with pytest.raises(TerminalError, match=r"spark-defaults\.conf") as err:
        set_running(session, {"spark.ssl.keyPassword": LEAK})
    assert LEAK not in str(err.value) and "spark.ssl.keyPassword" in str(err.value)


def test_sparks_redaction_covers_the_catalog_secrets_and_keeps_the_users_regex() -> None:
    conf = session_conf(SparkSection(), add_jars=False)
    regex = re.compile(conf[REDACTION_KEY])
    for key, value in _catalog_conf().items():
        if LEAK in value:
            assert regex.search(key) or regex.search(value), key
    assert not regex.search("spark.sql.catalog.lakeinlet.uri") and not regex.search("s3a://lake/t")
    theirs = session_conf(SparkSection(), add_jars=False, given={REDACTION_KEY: "(?i)myvault"})
    assert theirs[REDACTION_KEY] == f"(?i)myvault|{REDACTION}"  # merged: spark-submit's still redacts
    mine = session_conf(SparkSection(spark_conf=(f"{REDACTION_KEY}=corp[.]pin",)), add_jars=False)
    assert mine[REDACTION_KEY] == f"corp[.]pin|{REDACTION}"
    again = session_conf(SparkSection(), add_jars=False, given={REDACTION_KEY: mine[REDACTION_KEY]})
    assert again[REDACTION_KEY] == mine[REDACTION_KEY]  # not added twice
