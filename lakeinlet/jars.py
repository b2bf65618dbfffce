"""`lakeinlet jars`: the Spark jars lakeinlet needs (`s3a` for reading S3 with Spark, one group per
table format, `avro` for Avro sources, `delta-spark` for tests only), fetched from Maven
Central with Maven into `<dest>/<group>/` (cached), or printed as the `--packages` flags for
spark-submit on a cluster."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from lakeinlet import install_hint

WILDFLY = "org.wildfly.openssl:wildfly-openssl:2.2.5.Final"
"""s3a's optional OpenSSL binding (`fs.s3a.ssl.channel.mode` openssl or default; the default
`default_jsse` never loads it), fetched only when asked (`--only s3a-openssl`). 2.2.5.Final: the
releases before 2.2 cannot load OpenSSL 3's libssl (1.0.7.Final, Hadoop 3.3.4's own, also has
CVE-2020-25644); Hadoop 3.3.4's and 3.4.2's socket factories both work with it."""
POSTGRES_JDBC = "org.postgresql:postgresql:42.7.14"
"""Spark's driver for an Iceberg JDBC catalog on PostgreSQL (beside sqlite-jdbc for a SQLite one);
pyiceberg's side comes with the `postgres` extra."""
LINES: dict[str, dict[str, tuple[str, ...]]] = {
    "3.5": {
        # hadoop-aws of pyspark 3.5's Hadoop 3.3.4 with the newest SDK v1 bundle (1.12.782, the last
        # 1.12: netty 4.1.118 and jackson 2.17.2 shaded, ion-java gone; 1.12.262, the one Hadoop 3.3.4
        # was built with, shades netty 4.1.77, jackson-databind 2.12.6.1 and ion-java 1.0.2, each with
        # advisories). hadoop-aws 3.3.4 calls only SDK v1 APIs that 1.12 keeps.
        # spark-hadoop-cloud (Spark's side of the S3A committers, lakeinlet/committers.py): 3.5.8,
        # the newest 3.5 on Maven Central (3.5.9 is not there).
        "s3a": ("org.apache.hadoop:hadoop-aws:3.3.4", "com.amazonaws:aws-java-sdk-bundle:1.12.782",
                "org.apache.spark:spark-hadoop-cloud_2.12:3.5.8"),
        "s3a-openssl": (WILDFLY,),
        "hudi": ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0",),
        "iceberg": ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0",
                    "org.xerial:sqlite-jdbc:3.54.1.0", POSTGRES_JDBC),
        "delta-spark": ("io.delta:delta-spark_2.12:3.3.2", "io.delta:delta-storage:3.3.2"),
        # Avro, which Spark does not read alone: spark-avro of pyspark 3.5.9 itself. No XML group:
        # Databricks' spark-xml 0.18.0 resolves and reads, but as a relation without file metadata
        # (`_metadata.file_path`), which lineage needs (see incremental/read/formats.py).
        "avro": ("org.apache.spark:spark-avro_2.12:3.5.9",),
    },
    "4.1": {
        # pyspark 4.1's Hadoop is 3.4.2: s3a on the AWS SDK v2 bundle that Hadoop release pins, 2.29.52,
        # the last 2.29. From 2.30 the SDK adds checksums to every request and drops Content-MD5 by
        # default, which hadoop-aws 3.4.2 cannot switch off (HADOOP-19654 added the switches after it):
        # third-party stores (MinIO, Ceph) then refuse uploads and bulk deletes. Its shaded netty
        # 4.1.115 is behind 4.1.118's fixes (native-SSL SslHandler, Windows only), neither reachable
        # here: the bundle carries no netty-tcnative, so the async client's TLS is the JDK's.
        # spark-hadoop-cloud_2.13: 4.1.2, the newest 4.1 on Maven Central. No Hudi bundle for Spark 4
        # resolves from Maven Central, so Hudi has no group on this line.
        "s3a": ("org.apache.hadoop:hadoop-aws:3.4.2", "software.amazon.awssdk:bundle:2.29.52",
                "org.apache.spark:spark-hadoop-cloud_2.13:4.1.2"),
        "s3a-openssl": (WILDFLY,),
        "iceberg": ("org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0",
                    "org.xerial:sqlite-jdbc:3.54.1.0", POSTGRES_JDBC),
        # Delta's Spark-suffixed artifact (an unsuffixed one fails on another 4.x), and a release
        # built against a late enough 4.1: delta 4.1.0 calls a Parquet schema converter constructor
        # that later 4.1 patches no longer have (NoSuchMethodError on pyspark 4.1.4).
        "delta-spark": ("io.delta:delta-spark_4.1_2.13:4.4.0", "io.delta:delta-storage:4.4.0"),
        # spark-avro 4.1.1, the newest 4.1 on Maven Central (4.1.2 to 4.1.4 do not resolve); it
        # reads and writes Avro on pyspark 4.1.4 (tests/spark/test_source_formats.py). XML needs
        # no jar on this line: Spark 4 reads it itself.
        "avro": ("org.apache.spark:spark-avro_2.13:4.1.1",),
    },
}
"""Jar groups per Spark line (major.minor): `s3a` for s3a:// reads (`s3a-openssl` beside it only
when asked), one per table format, `avro` for Avro sources,
`delta-spark` for tests only."""
NOT_ON_LINE = {("4.1", "hudi"): "Hudi publishes no Spark 4 bundle on Maven Central: Hudi tables need "
                                "Spark 3.5 (a virtualenv with lakeinlet's spark35 extra: "
                                f"{install_hint('spark35')})"}
"""Why a group is missing from a line: the one line a run on that line stops with."""
ALL_GROUPS = tuple(dict.fromkeys(g for line in LINES.values() for g in line))


class UnsupportedSpark(RuntimeError):
    """The Spark version is not a line lakeinlet has jars for, or a group does not exist on it."""


def line_of(version: str) -> str:
    """`3.5.9` → `3.5`; raises UnsupportedSpark for a version outside the supported lines."""
    line = ".".join(version.split(".")[:2])
    if line not in LINES:
        raise UnsupportedSpark(f"Spark {version} is not supported: lakeinlet runs on Spark "
                               f"{' or '.join(f'{x}.x' for x in LINES)} ({install_hint('spark35')} "
                               "or [spark41])")
    return line


def installed_line() -> str:
    """The line of the pyspark installed beside lakeinlet (read without importing pyspark).

    Raises:
        UnsupportedSpark: pyspark is missing or of an unsupported version.
    """
    try:
        version = metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        raise UnsupportedSpark(f"pyspark is not installed: {install_hint('spark35')} or "
                               "[spark41]") from None
    return line_of(version)


def groups_of(line: str | None = None) -> dict[str, tuple[str, ...]]:
    """The jar groups of `line` (default: the installed pyspark's)."""
    return LINES[line or installed_line()]


def coordinates(group: str, line: str | None = None) -> tuple[str, ...]:
    """Maven coordinates of `group` on `line`.

    Raises:
        UnsupportedSpark: the group does not exist on the line (one line saying why).
    """
    line = line or installed_line()
    if group not in LINES[line]:
        why = NOT_ON_LINE.get((line, group), f"no jar group {group!r} for Spark {line}")
        raise UnsupportedSpark(why)
    return LINES[line][group]


RUNTIME_GROUPS = ("s3a", "hudi", "iceberg", "avro")
OPTIONAL_GROUPS = ("s3a-openssl",)
"""Groups fetched only when named with --only (a plain `lakeinlet jars` leaves them out)."""
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
ENV = "LAKEINLET_JARS"


class JarsUnavailable(RuntimeError):
    """Maven is missing or could not fetch a coordinate (e.g. Maven Central is unreachable)."""


def jar_name(coordinate: str) -> str:
    """`group:artifact:version` → the file name Maven copies it to."""
    _, artifact, version = coordinate.split(":")
    return f"{artifact}-{version}.jar"


CACHE_FOLDERS = {"3.5": "jars", "4.1": "jars-spark4"}
"""Each line's folder in the user's cache (`make test-spark4` uses the same): the 4.1 line's s3a
jars (613 MB) never land beside the 3.5 line's."""


def default_dir(line: str | None = None) -> Path:
    """Where jars live: $LAKEINLET_JARS, else the user's cache, one folder per Spark line (default:
    the installed pyspark's): `$XDG_CACHE_HOME/lakeinlet/jars` (`~/.cache/lakeinlet/jars`) for 3.5,
    `…/jars-spark4` for 4.1; never a folder found relative to the source tree or the working one."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if line is None:
        try:
            line = installed_line()
        except UnsupportedSpark:
            line = "3.5"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "lakeinlet" / CACHE_FOLDERS[line]


def missing(dest: Path, group: str, line: str | None = None) -> list[str]:
    """Coordinates of `group` (on `line`) whose jar is not in `dest/<group>/`. Both lines' jars can
    share a folder: their file names differ."""
    return [c for c in coordinates(group, line) if not (dest / group / jar_name(c)).is_file()]


def group_jars(dest: Path, group: str, line: str | None = None) -> list[Path]:
    """The jars of `group` under `dest` (empty if any is missing: a partial set is no set)."""
    want = coordinates(group, line)
    return [] if missing(dest, group, line) else [dest / group / jar_name(c) for c in want]


def _pom(coordinates: list[str]) -> str:
    deps = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version>"
        "</dependency>" for g, a, v in (c.split(":") for c in coordinates))
    return ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
            "<groupId>lakeinlet</groupId><artifactId>jars</artifactId><version>0</version>"
            f"<packaging>pom</packaging><dependencies>{deps}</dependencies></project>")


def fetch(dest: Path, group: str, mvn: str | None = None, line: str | None = None) -> list[Path]:
    """Copy `group`'s jars (of `line`, default the installed pyspark's) into `dest/<group>/` with
    Maven (nothing to do if all are there).

    Raises:
        JarsUnavailable: no `mvn` on the PATH, or Maven could not resolve a coordinate.
        UnsupportedSpark: the group does not exist on the line.
    """
    todo = missing(dest, group, line)
    if not todo:
        return group_jars(dest, group, line)
    mvn = mvn or shutil.which("mvn")
    if not mvn:
        raise JarsUnavailable("Maven (mvn) is needed to fetch jars from Maven Central: install it "
                              "(e.g. apt-get install maven), or pass the jars with --jars")
    out = dest / group
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pom.xml").write_text(_pom(todo))
        cmd = [mvn, "-B", "-q", "-f", str(Path(tmp) / "pom.xml"), f"{DEPENDENCY_PLUGIN}:copy-dependencies",
               f"-DoutputDirectory={tmp}/out", "-DexcludeTransitive=true"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            said = " ".join((done.stdout + done.stderr).split())[-600:]
            raise JarsUnavailable(f"Maven could not fetch {', '.join(todo)} (is Maven Central "
                                  f"reachable?): {said}")
        out.mkdir(parents=True, exist_ok=True)
        for c in todo:  # copy then rename: a killed fetch never leaves a half jar under its name
            shutil.copyfile(Path(tmp) / "out" / jar_name(c), out / (jar_name(c) + ".part"))
            (out / (jar_name(c) + ".part")).replace(out / jar_name(c))
    return group_jars(dest, group, line)


_CONNECTORS = ("org.apache.hadoop:hadoop-client-runtime", "com.google.cloud.bigdataoss:gcs-connector",
               "org.apache.hadoop:hadoop-azure", "org.apache.hadoop:hadoop-cloud-storage",
               "org.eclipse.jetty:jetty-util", "org.eclipse.jetty:jetty-util-ajax", "joda-time:joda-time",
               "com.fasterxml.jackson.core:jackson-databind",
               "com.fasterxml.jackson.core:jackson-annotations",
               "com.fasterxml.jackson.dataformat:jackson-dataformat-cbor",
               "org.apache.httpcomponents:httpclient", "org.apache.httpcomponents:httpcore")
EXCLUDES: dict[tuple[str, str], tuple[str, ...]] = {
    # hadoop-aws 3.3.4 declares wildfly-openssl 1.0.7.Final a runtime dependency: left out unless asked.
    ("3.5", "s3a"): (*_CONNECTORS, "org.wildfly.openssl:wildfly-openssl"),
    # Hadoop 3.4 adds the Huawei OBS connector (with its HTTP client and a newer jackson-core than
    # Spark's), S3's analytics accelerator stream (not the default input stream) and wildfly-openssl.
    ("4.1", "s3a"): (*_CONNECTORS, "org.apache.hadoop:hadoop-huaweicloud", "com.huaweicloud:esdk-obs-java",
                     "com.squareup.okhttp3:okhttp", "com.squareup.okio:okio",
                     "com.jamesmurty.utils:java-xmlbuilder", "com.fasterxml.jackson.core:jackson-core",
                     "software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3",
                     "org.wildfly.openssl:wildfly-openssl"),
}
"""What spark-submit must not resolve transitively for a (line, group): spark-hadoop-cloud's POM pulls
the GCS, Azure and other connectors and a second Hadoop client, none of which the S3A committers
use (with these left out, `--packages` resolves exactly the jars `lakeinlet jars` fetches)."""


def packages(groups: list[str], line: str | None = None) -> str:
    """The `--packages` value for spark-submit on a cluster (Spark resolves dependencies)."""
    coords = [c for g in groups for c in coordinates(g, line)]
    return ",".join(dict.fromkeys(coords))


def submit_flags(groups: list[str], line: str | None = None) -> str:
    """`--packages …` and, where a group needs it, `--exclude-packages …` for spark-submit."""
    line = line or installed_line()
    named = {c.rsplit(":", 1)[0] for g in groups for c in coordinates(g, line)}
    left_out = [e for g in groups for e in EXCLUDES.get((line, g), ()) if e not in named]
    excluded = ",".join(dict.fromkeys(left_out))
    return f"--packages {packages(groups, line)}" + (f" --exclude-packages {excluded}" if excluded else "")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakeinlet jars", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", type=Path, default=None,
                        help=f"folder for the jars, one sub-folder per group (default: ${ENV}, else "
                             "~/.cache/lakeinlet/jars on Spark 3.5, ~/.cache/lakeinlet/jars-spark4 on 4.1)")
    parser.add_argument("--only", action="append", choices=ALL_GROUPS, metavar="GROUP",
                        help=f"fetch only this group (repeatable; one of {', '.join(ALL_GROUPS)}; "
                             f"default: every group of the Spark line but {', '.join(OPTIONAL_GROUPS)})")
    parser.add_argument("--spark", choices=sorted(LINES), metavar="LINE",
                        help=f"the Spark line the jars are for ({' or '.join(sorted(LINES))}; default: "
                             "the installed pyspark's), e.g. a cluster's Spark for --packages")
    parser.add_argument("--packages", action="store_true",
                        help="print spark-submit's --packages (and --exclude-packages) flags for the "
                             f"groups (default: {', '.join(RUNTIME_GROUPS)}, those the line has) "
                             "instead of fetching")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        line = args.spark or installed_line()
        if args.packages:
            print(submit_flags(args.only or [g for g in RUNTIME_GROUPS if g in LINES[line]], line))
            return 0
        dest = args.dest or default_dir(line)
        for group in args.only or [g for g in LINES[line] if g not in OPTIONAL_GROUPS]:
            fresh = bool(missing(dest, group, line))
            jars = fetch(dest, group, line=line)
            names = ", ".join(p.name for p in jars)
            print(f"{group} (Spark {line}): {'fetched' if fresh else 'cached'} {names} in {dest / group}")
    except (JarsUnavailable, UnsupportedSpark) as exc:
        print(f"lakeinlet jars: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
