"""Iceberg's Spark engine reached through py4j where no public Python API exists: snapshot
properties of SQL commands, and the orphan-file action."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar


@contextmanager
def commit_properties(spark: Any, props: dict[str, str]) -> Iterator[None]:
    """Snapshot summary properties for SQL row-level commands (DELETE) run on this thread: Iceberg
    reads them from `CommitMetadata`'s thread-local (set by reflection: PySpark runs the SQL on the
    Java thread paired with this Python thread), so they land in the DELETE's snapshot."""
    jvm = spark._jvm
    field = jvm.py4j.reflection.ReflectionUtil.classForName(
        "org.apache.iceberg.spark.CommitMetadata").getDeclaredField("COMMIT_PROPERTIES")
    field.setAccessible(True)
    local = field.get(None)
    values = jvm.java.util.HashMap()
    for key, value in props.items():
        values.put(key, value)
    local.set(values)
    try:
        yield
    finally:
        local.remove()


class _KeepFile:
    """A java.util.function.Consumer that deletes nothing (a dry run of the orphan-file action)."""

    def accept(self, path: str) -> None:
        return None

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Consumer"]


def orphan_files(spark: Any, table: str, older_ms: int, dry_run: bool) -> list[str]:
    """Files under `table` that no snapshot references, older than `older_ms` (epoch ms): deleted
    by Iceberg's orphan-file action unless `dry_run` (then it lists them and deletes nothing)."""
    jt = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table)
    action = spark._jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession) \
        .deleteOrphanFiles(jt).olderThan(older_ms)
    if dry_run:  # the action lists what it would delete and hands each path to this no-op
        from pyspark.java_gateway import ensure_callback_server_started

        ensure_callback_server_started(spark.sparkContext._gateway)
        action = action.deleteWith(_KeepFile())
    return list(action.execute().orphanFileLocations())
