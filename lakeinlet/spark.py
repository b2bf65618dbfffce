"""The SparkSession factory both jobs use: master, jars and s3a settings from configuration.

Nothing cluster-specific is hard-coded: jars come from `--jars`, `$LAKEINLET_JARS` or the
checkout's `.jars/` (fetched by `lakeinlet jars`), only the groups a run needs; the s3a endpoint,
path-style access, plain HTTP and static credentials are set only when an emulator endpoint is
configured. On EMR/Dataproc the platform's connector, or `spark-submit --packages`, is used.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakeinlet import jars as jarlib
from lakeinlet.config import setting
from lakeinlet.errors import TerminalError

LOG_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")
REQUIRED_CLASSES = {"s3a": ("org.apache.hadoop.fs.s3a.S3AFileSystem", "the s3a connector")}
"""Per jar group: a class that proves the group is on Spark's classpath, and what it is."""


@dataclass(frozen=True)
class SparkSection:
    """Spark: master, extra jars and session settings (spark-submit flags take precedence)."""

    master: str | None = setting(
        None, "Spark master, e.g. local[2]; unset under spark-submit (its --master is used).")
    jars: str | None = setting(
        None, "Comma-separated jars, or a folder holding the groups `lakeinlet jars` fetches "
        "(<folder>/s3a, /hudi, /iceberg): a run adds only the groups it needs. Default: the "
        "checkout's .jars/. Unset on a cluster that gets them from spark-submit --packages.",
        env="LAKEINLET_JARS", metavar="PATHS")
    shuffle_partitions: int = setting(
        8, "spark.sql.shuffle.partitions for the loader's small aggregations.")
    spark_conf: tuple[str, ...] = setting(
        (), "Extra Spark settings as key=value (repeatable).", metavar="KEY=VALUE")
    spark_log_level: str = setting(
        "ERROR", "Level of the JVM's own logging (Spark, Hadoop, Hudi, Iceberg). ERROR keeps the "
        "console to lakeinlet's lines; WARN or INFO bring Spark's back, INFO with progress bars.",
        choices=LOG_LEVELS)

    def validate(self) -> list[str]:
        bad = [kv for kv in self.spark_conf if "=" not in kv]
        problems = [f"--spark-conf: expected key=value, found {kv!r}" for kv in bad]
        local = [j.strip() for j in (self.jars or "").split(",") if j.strip() and "://" not in j]
        return problems + [f"--jars (or LAKEINLET_JARS): {j} does not exist; `lakeinlet jars` fetches "
                           "the jars into the checkout's .jars/" for j in local if not Path(j).exists()]

    @property
    def extra(self) -> dict[str, str]:
        return {k.strip(): v.strip() for k, _, v in (kv.partition("=") for kv in self.spark_conf)}


def jar_list(jars: str | None, groups: Sequence[str] = ()) -> list[str]:
    """Expand a comma list of jars and folders into jar paths. A folder with group sub-folders
    (the `lakeinlet jars` layout) gives the jars of `groups`; a plain folder gives its *.jar."""
    out: list[str] = []
    for item in filter(None, (j.strip() for j in (jars or "").split(","))):
        path = Path(item)
        if not path.is_dir():
            out.append(item)
        elif any((path / g).is_dir() for g in jarlib.GROUPS):
            out.extend(str(p) for g in groups for p in jarlib.group_jars(path, g))
        else:
            out.extend(sorted(str(p) for p in path.glob("*.jar")))
    return out


def session_conf(section: SparkSection, endpoint_url: str | None = None, groups: Sequence[str] = (),
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Spark settings lakeinlet needs, as a plain dict (testable without a JVM).

    Args:
        groups: jar groups the run needs (`s3a`, a table format's).
        extra: settings a table format needs (its session extension, catalog, serializer).
    """
    conf = {
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(section.shuffle_partitions),
        "spark.sql.sources.partitionOverwriteMode": "static",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": str(section.spark_log_level in ("INFO", "DEBUG")).lower(),
        # The loader passes explicit file paths; above this many paths Spark starts a whole job
        # just to stat them (measured: 2.5x slower for 40 objects on s3a). Overridable.
        "spark.sql.sources.parallelPartitionDiscovery.threshold": "10000",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log4j2_file(section.spark_log_level)}",
    }
    if found := jar_list(section.jars or str(jarlib.default_dir()), groups):
        conf["spark.jars"] = ",".join(found)
    if endpoint_url:
        conf |= s3a_emulator_conf(endpoint_url)
    return conf | dict(extra or {}) | section.extra


def log4j2_file(level: str) -> str:
    """A log4j2 configuration sending the JVM's logging at `level` and above to stderr."""
    path = Path(tempfile.gettempdir()) / f"lakeinlet-log4j2-{level.lower()}.properties"
    # PySpark's gateway logger set to the same level: otherwise Spark, taking it for an
    # interactive shell, prints "Setting default log level to WARN" (measured).
    text = ("status = error\nappender.console.type = Console\nappender.console.name = console\n"
            "appender.console.target = SYSTEM_ERR\nappender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n\n"
            f"rootLogger.level = {level.lower()}\nrootLogger.appenderRef.stdout.ref = console\n"
            "logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\n"
            f"logger.gateway.level = {level.lower()}\n")
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(path)
    return str(path)


def s3a_emulator_conf(endpoint_url: str) -> dict[str, str]:
    """s3a against an emulator: endpoint, path style, SSL as the URL says, static test keys."""
    pre = "spark.hadoop.fs.s3a."
    conf = {pre + "endpoint": endpoint_url, pre + "path.style.access": "true",
            pre + "connection.ssl.enabled": str(endpoint_url.startswith("https")).lower(),
            pre + "impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            pre + "change.detection.mode": "none", pre + "fast.upload": "true"}
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        conf |= {pre + "aws.credentials.provider":
                 "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
                 pre + "access.key": key, pre + "secret.key": secret}
    return conf


def get_session(section: SparkSection, endpoint_url: str | None = None, app_name: str = "lakeinlet",
                groups: Sequence[str] = (), extra: Mapping[str, str] | None = None,
                required: Mapping[str, tuple[str, str]] | None = None) -> Any:
    """Build (or reuse) the SparkSession; workers run the driver's Python interpreter.

    Args:
        required: jar group → (class, what it is) that must load; default: s3a's when asked for.

    Raises:
        TerminalError: a required class is not on Spark's classpath (one line saying how to get it).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    if section.master:
        builder = builder.master(section.master)
    for key, value in session_conf(section, endpoint_url, groups, extra).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(section.spark_log_level)
    wanted = dict(required or {g: REQUIRED_CLASSES[g] for g in groups if g in REQUIRED_CLASSES})
    check_classes(session, wanted)
    return session


def check_classes(session: Any, wanted: Mapping[str, tuple[str, str]]) -> None:
    """Raise TerminalError naming the first jar group whose class Spark cannot load."""
    for group, (cls, what) in wanted.items():
        try:  # Spark's own class loader: the one that holds --jars/--packages under spark-submit
            session._jvm.org.apache.spark.util.Utils.classForName(cls, False, False)
        except Exception as exc:  # py4j wraps ClassNotFoundException
            raise TerminalError(
                f"Spark cannot load {cls} ({what}): run `lakeinlet jars --only {group}` to fetch "
                f"{', '.join(jarlib.GROUPS[group][:2])} into {jarlib.default_dir()}, or pass "
                f"`{'--packages ' + jarlib.packages([group])}` to spark-submit") from exc
