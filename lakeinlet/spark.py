"""The SparkSession factory both jobs use: lakeinlet's defaults under whatever spark-submit was given
(its `--conf`, `--packages`, `--jars` and spark-defaults.conf win; jars are added only outside
spark-submit, from `--jars` or the jar folder)."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lakeinlet import jars as jarlib
from lakeinlet import jvm as lakejvm
from lakeinlet.committers import COMMIT_PROTOCOL, s3a_committer_conf
from lakeinlet.config import setting
from lakeinlet.errors import TerminalError
from lakeinlet.log4j import log4j2_file
from lakeinlet.redact import redact_setting
from lakeinlet.spark_secrets import REDACTION_KEY, launch_settings, redaction_regex, set_running

log = logging.getLogger(__name__)

LOG_LEVELS = ("ERROR", "WARN", "INFO", "DEBUG")
REQUIRED_CLASSES = {"s3a": ("org.apache.hadoop.fs.s3a.S3AFileSystem", "the s3a connector")}
"""Per jar group: a class that proves the group is on Spark's classpath, and what it is."""
HUDI_JOL = "org.apache.hudi.org.openjdk.jol.vm.VM"
"""The object-layout library (JOL) Hudi's bundle shades and sizes records with."""


@dataclass(frozen=True)
class SparkSection:
    """Spark: master, extra jars and session settings (spark-submit flags take precedence)."""

    master: str | None = setting(
        None, "Spark master, e.g. local[2]; unset under spark-submit (its --master is used).")
    jars: str | None = setting(
        None, "Comma-separated jars, or a folder holding the groups `lakeinlet jars` fetches "
        "(<folder>/s3a, /hudi, /iceberg): a run adds only the groups it needs. Default: the folder "
        "`lakeinlet jars` fetches into (~/.cache/lakeinlet/jars). Used only outside spark-submit: "
        "under spark-submit give jars with its --packages or --jars.",
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
        problems = [f"--spark-conf: expected key=value, found {redact_setting(kv)!r}" for kv in bad]
        local = [j.strip() for j in (self.jars or "").split(",") if j.strip() and "://" not in j]
        return problems + [f"--jars (or LAKEINLET_JARS): {j} does not exist; `lakeinlet jars --dest {j}` "
                           "fetches the jar groups into a folder" for j in local if not Path(j).exists()]

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
        elif any((path / g).is_dir() for g in jarlib.ALL_GROUPS):
            out.extend(str(p) for g in groups for p in jarlib.group_jars(path, g))
        else:
            out.extend(sorted(str(p) for p in path.glob("*.jar")))
    return out


def default_jars(section: SparkSection, groups: Sequence[str]) -> list[str]:
    """The jars a run outside spark-submit adds: `--jars`, else the default folder when it exists."""
    if section.jars:
        return jar_list(section.jars, groups)
    folder = jarlib.default_dir()
    return jar_list(str(folder), groups) if folder.is_dir() else []


def under_spark_submit() -> bool:
    """True when spark-submit started this Python process (its JVM and settings already exist)."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT"))


EXACT_DATES = {f"spark.sql.{fmt}.{kind}RebaseModeIn{way}": "CORRECTED"
               for fmt, kinds in (("parquet", ("datetime", "int96")), ("avro", ("datetime",)))
               for kind in kinds for way in ("Read", "Write")}
"""Dates and timestamps read and written as they are (the proleptic Gregorian calendar pyarrow, Spark 3+
and the table formats write). Spark 3.5's default, EXCEPTION, refuses a value before 1582-10-15 in a
file whose writer it does not know (a valid pandas file with 0001-01-01 was `corrupt`); Spark 4's
default is CORRECTED. Spark still reads a file Spark 2.x or Hive wrote in their hybrid calendar as such."""
LIST_KEYS = ("spark.sql.extensions",)
"""Comma lists merged rather than replaced: a format's session extension is added to the user's."""


def session_conf(section: SparkSection, endpoint_url: str | None = None, groups: Sequence[str] = (),
                 extra: Mapping[str, str] | None = None, given: Mapping[str, str] | None = None,
                 add_jars: bool = True, committers: bool = True) -> dict[str, str]:
    """The Spark settings lakeinlet sets, as a plain dict (testable without a JVM).

    Args:
        groups: jar groups the run needs (`s3a`, a table format's).
        extra: settings a table format needs (its session extension, catalog, serializer).
        given: settings the launcher already holds (spark-submit's --conf/--packages/--jars and
            spark-defaults.conf): they win, and their keys are left out of the result.
        add_jars: add `spark.jars` from `--jars` or the jar folder (False under spark-submit).
        committers: with the `s3a` group, write through the S3A magic committer (`committers`).
    """
    given = dict(given or {})
    conf = {
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": str(section.shuffle_partitions),
        "spark.sql.sources.partitionOverwriteMode": "static",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": str(section.spark_log_level in ("INFO", "DEBUG")).lower(),
        # The loader passes explicit file paths; above this many paths Spark starts a whole job
        # just to stat them (bench/loader_listing.py). Overridable.
        "spark.sql.sources.parallelPartitionDiscovery.threshold": "10000",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={log4j2_file(section.spark_log_level)}",
    } | EXACT_DATES
    jars_given = any(given.get(k) for k in ("spark.jars", "spark.jars.packages"))
    if add_jars and not jars_given and (found := default_jars(section, groups)):
        conf["spark.jars"] = ",".join(found)
    if endpoint_url:
        conf |= s3a_emulator_conf(endpoint_url)
    if "s3a" in groups and committers:  # Spark's writes to s3a through the S3A magic committer
        conf |= s3a_committer_conf("s3a")
    conf |= dict(extra or {})
    for key in LIST_KEYS:
        if key in conf and given.get(key):
            mine = [v for v in conf[key].split(",") if v not in given[key].split(",")]
            conf[key] = ",".join([given[key], *mine])
    kept = {k: v for k, v in conf.items() if k not in given or k in LIST_KEYS}
    redaction = redaction_regex(given.get(REDACTION_KEY), section.extra.get(REDACTION_KEY))
    return kept | section.extra | {REDACTION_KEY: redaction}


def s3a_emulator_conf(endpoint_url: str) -> dict[str, str]:
    """s3a against an emulator or another S3 store: endpoint, path style, SSL as the URL says.

    No keys: s3a's default credential chain (Hadoop 3.3.4 and 3.4.2 alike: session keys, then
    `fs.s3a.access.key`/`secret.key`, then the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/
    AWS_SESSION_TOKEN environment variables, then the instance's role) finds them in the environment
    the JVM inherits, and Spark copies them into the Hadoop configuration its tasks receive. A key
    in these settings would reach the JVM's command line, which every user of the machine can read.
    """
    pre = "spark.hadoop.fs.s3a."
    return {pre + "endpoint": endpoint_url, pre + "path.style.access": "true",
            pre + "connection.ssl.enabled": str(endpoint_url.startswith("https")).lower(),
            pre + "impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            pre + "change.detection.mode": "none", pre + "fast.upload": "true"}


def launcher_conf() -> dict[str, str]:
    """Settings spark-submit (or spark-defaults.conf) gave this process's Spark, before any session:
    empty outside spark-submit. Reading them starts no SparkContext."""
    if not under_spark_submit():
        return {}
    from pyspark import SparkConf

    lakejvm.gateway()  # connects to spark-submit's JVM; creates no context
    return dict(SparkConf().getAll())


def get_session(section: SparkSection, endpoint_url: str | None = None, app_name: str = "lakeinlet",
                groups: Sequence[str] = (), extra: Mapping[str, str] | None = None,
                required: Mapping[str, tuple[str, str]] | None = None) -> Any:
    """Build (or reuse) the SparkSession; workers run the driver's Python interpreter unless told.

    Args:
        required: jar group → (class, what it is) that must load; default: s3a's when asked for.

    Raises:
        TerminalError: a required class is not on Spark's classpath (one line saying how to get it).
    """
    from pyspark.sql import SparkSession

    submitted = under_spark_submit()
    if not submitted:  # under spark-submit the JVM's version is checked once the session exists
        spark_line(groups)
    given = launcher_conf()
    if not submitted:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    elif section.jars:
        log.warning("--jars/LAKEINLET_JARS is ignored under spark-submit: give jars with its "
                    "--packages or --jars")
    builder = SparkSession.builder if "spark.app.name" in given else SparkSession.builder.appName(app_name)
    if section.master:
        builder = builder.master(section.master)
    committers = not submitted or "s3a" not in groups or lakejvm.loadable(lakejvm.gateway(), COMMIT_PROTOCOL)
    if not committers:
        log.warning("spark-hadoop-cloud is not on spark-submit's classpath: writes to s3a go through "
                    "Spark's default committer (a COPY and a DELETE per file); add it with `%s`",
                    jarlib.submit_flags(["s3a"]))
    conf = session_conf(section, endpoint_url, groups, extra, given, not submitted, committers)
    launch, held = launch_settings(conf, submitted)
    for key, value in launch.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    set_running(session, held)
    spark_line(groups, session.version)
    session.sparkContext.setLogLevel(section.spark_log_level)
    wanted = dict(required or {g: REQUIRED_CLASSES[g] for g in groups if g in REQUIRED_CLASSES})
    check_classes(session, wanted, submitted, section.jars)
    if "hudi" in groups:
        settle_object_sizes(lakejvm.of(session))
    return session


def spark_line(groups: Sequence[str] = (), version: str | None = None) -> str:
    """The Spark line (`3.5`, `4.1`) of `version` (default: the installed pyspark's).

    Raises:
        TerminalError: lakeinlet has no jars for that Spark, or one of `groups` does not exist on
            its line (one line saying what to install).
    """
    try:
        line = jarlib.line_of(version) if version else jarlib.installed_line()
        for group in groups:
            jarlib.coordinates(group, line)
    except jarlib.UnsupportedSpark as exc:
        raise TerminalError(str(exc)) from None
    return line


def settle_object_sizes(jvm: Any) -> str:
    """Start Hudi's JOL in this JVM with its console output held back; returns what it printed
    (also logged at DEBUG).

    Hudi sizes a merge's records with JOL, whose first use in a JVM tries to attach an agent and
    the HotSpot Serviceability Agent to that JVM and, both refused to an unprivileged process,
    prints two "# WARNING: Unable to ..." lines with System.out.println: past log4j, so
    `--spark-log-level ERROR` does not hold them, and onto the user's stdout in local mode (the
    executors run in the driver's JVM). No JVM option quiets both: JOL 0.16, the one Hudi's
    bundle shades, prints its Serviceability Agent line even when `-Djol.skipHotspotSAAttach`
    skips the attach, and `-Djdk.attach.allowAttachSelf` trades the agent line for a dynamic
    agent load (a JVM warning of its own from Java 21 on). JOL keeps the VM it detects for the
    JVM's life, so detecting it once here, System.out held, leaves nothing to print later. The
    Serviceability Agent attach is skipped unless the user set the property: it refines object
    addresses, not the sizes Hudi asks for, and sensing it delays every start. A cluster's
    executors still print the lines, to their own stdout logs.
    """
    if not lakejvm.loadable(jvm, HUDI_JOL):
        return ""
    system = jvm.java.lang.System
    if system.getProperty("jol.skipHotspotSAAttach") is None:
        system.setProperty("jol.skipHotspotSAAttach", "true")
    held, console = jvm.java.io.ByteArrayOutputStream(), system.out
    system.setOut(jvm.java.io.PrintStream(held, True))
    try:
        jvm.org.apache.hudi.org.openjdk.jol.vm.VM.current()
    except Exception as exc:  # py4j wraps whatever JOL throws; Hudi then meets it itself
        log.debug("JOL did not start: %s", exc)
    finally:
        system.setOut(console)
    printed = str(held.toString()).strip()
    if printed:
        log.debug("JOL (Hudi's record sizes) printed: %s", printed)
    return printed


def check_classes(session: Any, wanted: Mapping[str, tuple[str, str]], submitted: bool = False,
                  jars: str | None = None) -> None:
    """Raise TerminalError naming the first jar group whose class Spark cannot load, and what to do."""
    for group, (cls, what) in wanted.items():
        if not lakejvm.loadable(lakejvm.of(session), cls):
            how = how_to_get_jars(group, submitted, jars)
            raise TerminalError(f"Spark cannot load {cls} ({what}): {how}")


def how_to_get_jars(group: str, submitted: bool, jars: str | None) -> str:
    if submitted:
        return f"pass `{jarlib.submit_flags([group])}` (or those jars with --jars) to spark-submit"
    folder = jars if jars and "," not in jars and Path(jars).is_dir() else None
    if jars and not folder:
        wanted = ", ".join(jarlib.coordinates(group))
        return f"--jars/LAKEINLET_JARS ({jars}) holds no jar of {wanted}: add them"
    folder = folder or str(jarlib.default_dir())
    return (f"run `lakeinlet jars --dest {folder} --only {group}` (a run looks for them in "
            f"{folder}/{group}/), or give them with --jars")


def empty_frame(spark: Any, schema: Any) -> Any:
    """A DataFrame of `schema` with no rows and no partitions: writing it runs no task, where
    `createDataFrame([], schema)` parallelizes a Python list (a Python worker per partition on
    the executors, which then need lakeinlet's Python)."""
    return spark.createDataFrame(spark.sparkContext.emptyRDD(), schema)
