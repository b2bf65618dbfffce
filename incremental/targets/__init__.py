"""Target tables behind one port: Delta, Hudi and Iceberg adapters, picked in one place, with
what each needs of the Spark session."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeinlet.errors import ConfigError
from lakeinlet.incremental.read.formats import CODECS, source_needs
from lakeinlet.storage import TableLocation, spark_uri

if TYPE_CHECKING:  # settings import this package's sections: no import cycle at run time
    from lakeinlet.incremental.ports import Target
    from lakeinlet.incremental.settings import LoaderConfig

FORMATS = ("delta", "hudi", "iceberg")
HUDI_SESSION = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
}
"""Session settings Hudi's Spark bundle needs (set by lakeinlet when the target is Hudi)."""
HUDI_CLASS = ("org.apache.hudi.DefaultSource", "the Hudi Spark bundle")
ICEBERG_EXTENSION = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
DELTA_SESSION = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
                 "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"}
"""delta-spark's settings (tests read lakeinlet's Delta tables with it; the loader writes with delta-rs)."""
ICEBERG_CLASS = ("org.apache.iceberg.spark.SparkCatalog", "the Iceberg Spark runtime")


@dataclass(frozen=True)
class SparkNeeds:
    """What a target format adds to the Spark session: jar groups, session settings, and classes
    that prove the jars are there; `lakeinlet.spark` turns that into the session."""

    groups: list[str] = field(default_factory=list)
    conf: dict[str, str] = field(default_factory=dict)
    required: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Built:
    """The target adapter, and what a run holds while it writes to it."""

    target: Target
    hold: Callable[[], AbstractContextManager[None]] = nullcontext
    """Hudi: the table's writer lease (its commits do not check the checkpoint); others: nothing
    (their commits do)."""


def build_target(config: LoaderConfig, spark: Callable[[], Any]) -> Built:
    """The adapter for `--target-format` (`spark` starts the session only when a target needs it)."""
    t, aws, table = config.tables, config.aws, table_location(config)
    if t.target_format == "delta":
        from lakeinlet.incremental.targets.delta.target import DeltaTarget

        return Built(DeltaTarget(table, aws, t.app_id, t.partition_by, t.spark_scheme, spark,
                                 t.target_file_bytes, config.merge.spec))
    if t.target_format == "iceberg":
        from lakeinlet.incremental.targets.iceberg.outcome_files import OutcomeFiles
        from lakeinlet.incremental.targets.iceberg.target import IcebergTarget

        return Built(IcebergTarget(catalog_of(config), t.app_id, t.partition_by, spark,
                                   OutcomeFiles(TableLocation.of(t.ledger_uri).sibling("/_pending"), aws),
                                   file_bytes=t.target_file_bytes, merge=config.merge.spec))
    if t.target_format == "hudi":
        from lakeinlet.incremental.targets.hudi.target import HudiTarget

        hudi = HudiTarget(table, aws, t.app_id, t.partition_by, t.spark_scheme, config.hudi, spark,
                          writer_lease(config), config.merge.spec)
        return Built(hudi, hudi.writing)
    raise ConfigError([f"--target-format {t.target_format}: expected one of {', '.join(FORMATS)}"])


def table_location(config: LoaderConfig) -> TableLocation:
    """The target table's location (`--table`), in every form its engines speak."""
    return TableLocation(config.tables.table or "", config.tables.spark_scheme)


def local_settings(target_format: str, folder: str) -> dict[str, str]:
    """Settings for a throw-away local run with its files in `folder`: an Iceberg catalog (SQLite)
    there (a table on the emulator's S3 needs one named, and it must not outlive the emulator's
    tables); nothing for Delta and Hudi, which need no catalog."""
    if target_format != "iceberg":
        return {}
    return {"iceberg_catalog_uri": f"jdbc:sqlite:{folder}/iceberg-catalog.db"}


def writer_lease(config: LoaderConfig) -> Any:
    """The table's writer lease, beside the table (`<table>.lakeinlet-writer.json`): inside it, an
    object under `.hoodie/` makes Hudi take a table that does not exist yet for a broken one."""
    from lakeinlet.aws import client
    from lakeinlet.incremental.targets.hudi.lease import LocalLease, S3Lease
    where = table_location(config).resolved().sibling(".lakeinlet-writer").uri
    if where.startswith("s3://"):
        return S3Lease(client("s3", config.aws), where + ".json", config.hudi.lease_seconds)
    return LocalLease(where + ".lock")


def catalog_of(config: LoaderConfig) -> Any:
    from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog

    table = table_location(config).resolved()
    # As given, trailing slash and all: the default table name holds a digest of this string.
    return IcebergCatalog(config.iceberg, spark_uri(table.given, table.spark_scheme), config.aws)


def formats_on_line() -> tuple[str, ...]:
    """The formats whose jars exist for the installed Spark line (Hudi has none on Spark 4)."""
    from lakeinlet import jars

    return tuple(f for f in FORMATS if f != "hudi" or "hudi" in jars.groups_of())


def every_format() -> SparkNeeds:
    """One session that can write every format of the Spark line and read every source format
    (tests, benchmarks, notebooks comparing formats; a real run sets only its own): both session
    extensions (and Hudi's settings where the line has Hudi), all jar groups (`delta-spark` for
    interoperability checks, Avro's)."""
    targets = _every_target()
    avro = source_needs("avro")
    return SparkNeeds(targets.groups + avro.groups, targets.conf | CODECS, targets.required | avro.required)


def _every_target() -> SparkNeeds:
    required = {"iceberg": ICEBERG_CLASS,
                "delta-spark": ("io.delta.tables.DeltaTable", "Delta's own Spark engine")}
    if "hudi" not in formats_on_line():  # Delta 4 reads only through its extension and catalog
        return SparkNeeds(["iceberg", "delta-spark"], DELTA_SESSION | {
            "spark.sql.extensions": ",".join([ICEBERG_EXTENSION, DELTA_SESSION["spark.sql.extensions"]])},
            required)
    extensions = ",".join([HUDI_SESSION["spark.sql.extensions"], ICEBERG_EXTENSION])
    return SparkNeeds(["hudi", "iceberg", "delta-spark"], HUDI_SESSION | {"spark.sql.extensions": extensions},
                      {"hudi": HUDI_CLASS, **required})


def spark_needs(config: LoaderConfig) -> SparkNeeds:
    """Jar groups, session settings and required classes of the target format and of the source
    format (`read.formats`: Avro's jars, XML's on Spark 3.5, the zstd codec)."""
    target = _target_needs(config)
    source = source_needs(config.read.source_format)
    return SparkNeeds(target.groups + source.groups, source.conf | target.conf,
                      target.required | source.required)


def _target_needs(config: LoaderConfig) -> SparkNeeds:
    fmt = config.tables.target_format
    if fmt == "hudi":
        return SparkNeeds(["hudi"], HUDI_SESSION, {"hudi": HUDI_CLASS})
    if fmt == "iceberg":
        return SparkNeeds(["iceberg"], {"spark.sql.extensions": ICEBERG_EXTENSION,
                                        **catalog_of(config).spark_conf()}, {"iceberg": ICEBERG_CLASS})
    return SparkNeeds()
