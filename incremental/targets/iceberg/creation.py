"""Creating the Iceberg target table: with its first, empty snapshot, in a namespace made if missing,
and never over a location that holds a table its catalog does not know (that would fork it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow.fs as pafs

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.targets.iceberg.answers import EXISTS, CreatorRaced, classify, create_namespace
from lakeinlet.incremental.targets.iceberg.catalog import IcebergCatalog
from lakeinlet.retry import transient
from lakeinlet.spark import empty_frame
from lakeinlet.storage import TableLocation

FOREIGN_WAIT = (0.5, 1.0, 2.0)
"""Pauses before a location's metadata that the catalog does not know is called foreign: a loader
on the same catalog may be between writing its first metadata.json and registering it."""
ACCEPT_ANY_SCHEMA = "write.spark.accept-any-schema"
PROPERTIES = {"format-version": "2", ACCEPT_ANY_SCHEMA: "true",
              "write.metadata.delete-after-commit.enabled": "true",
              "write.metadata.previous-versions-max": "100"}


def foreign_or_none(catalog: IcebergCatalog, load: Callable[[], Any], sleep: Callable[[float], None]) -> Any:
    """None when the location holds no Iceberg metadata (the table may be created); the table
    (`load()`) if a creator on this catalog registered it meanwhile.

    Raises:
        TerminalError: the location holds a table this catalog does not know (creating one
            would fork it: two metadata chains in one folder, the checkpoint lost).
    """
    if catalog.section.iceberg_catalog == "hadoop":
        return None  # the path-based catalog's table is its location
    found = metadata_files(catalog.location, catalog)
    for pause in FOREIGN_WAIT if found else ():
        sleep(pause)
        t = load()
        if t is not None:
            return t
    if found:
        raise TerminalError(
            f"{catalog.location} already holds an Iceberg table ({found[0]}) that catalog "
            f"{catalog.describe()} does not know as {catalog.identifier}: point "
            "--iceberg-catalog/--iceberg-catalog-uri (and --iceberg-table) at the catalog that "
            "holds it, or register it there")
    return None


def create(spark: Any, catalog: IcebergCatalog, schema: Any, partition_by: Sequence[str]) -> None:
    """The table (Spark's `schema`) and its first, empty snapshot in one commit (a second creator
    just goes on); its namespace is there (`namespace`)."""
    empty = empty_frame(spark, schema)
    w = empty.writeTo(catalog.spark_name).using("iceberg")
    for key, value in (PROPERTIES | _location(catalog)).items():
        w = w.tableProperty(key, value)
    if partition_by:
        from lakeinlet import column_names

        w = w.partitionedBy(*[column_names.col(c) for c in partition_by])
    try:
        w.option("snapshot-property.lakeinlet.operation", "create").create()
    except Exception as exc:
        if classify(exc) != EXISTS:
            raise


def namespace(spark: Any, catalog: IcebergCatalog, sleep: Callable[[float], None]) -> None:
    """CREATE NAMESPACE IF NOT EXISTS, once more if the catalog refused it as the second of two
    creators that both found it missing (`CREATOR_RACE`): the second try finds it there."""
    sql = f"CREATE NAMESPACE IF NOT EXISTS {catalog.name}.{catalog.identifier.split('.')[0]}"
    once_more = transient(2, sleep=sleep, on=CreatorRaced, first_wait=FOREIGN_WAIT[0])
    once_more(create_namespace, spark, sql)


def _location(catalog: IcebergCatalog) -> dict[str, str]:
    return {} if catalog.section.iceberg_catalog == "hadoop" else {"location": catalog.location}


def metadata_files(location: str, catalog: IcebergCatalog) -> list[str]:
    """The `*.metadata.json` files under `<location>/metadata/` (s3 or local), newest name last."""
    fs, root = TableLocation(location).filesystem(catalog.aws)
    infos = fs.get_file_info(pafs.FileSelector(f"{root}/metadata", allow_not_found=True))
    return sorted(i.path for i in infos if i.path.endswith(".metadata.json"))

