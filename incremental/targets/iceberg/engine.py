"""Iceberg's Spark engine reached through py4j where no public Python API exists: snapshot
properties of SQL commands, and the orphan-file action."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from lakeinlet import jvm as lakejvm


@contextmanager
def commit_properties(spark: Any, props: dict[str, str]) -> Iterator[None]:
    """Snapshot summary properties for SQL row-level commands (DELETE) run on this thread: Iceberg
    reads them from `CommitMetadata`'s thread-local (set by reflection: PySpark runs the SQL on the
    Java thread paired with this Python thread), so they land in the DELETE's snapshot."""
    local = lakejvm.static_field(spark, "org.apache.iceberg.spark.CommitMetadata", "COMMIT_PROPERTIES")
    values = lakejvm.of(spark).java.util.HashMap()
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
    iceberg, js = lakejvm.of(spark).org.apache.iceberg.spark, lakejvm.session(spark)
    action = iceberg.actions.SparkActions.get(js).deleteOrphanFiles(
        iceberg.Spark3Util.loadIcebergTable(js, table)).olderThan(older_ms)
    if dry_run:  # the action lists what it would delete and hands each path to this no-op
        lakejvm.start_callback_server(spark)
        action = action.deleteWith(_KeepFile())
    return list(action.execute().orphanFileLocations())
