"""The target table as an operator sees it, whatever its format: opened read-only through the
loader's target port, its rows read by the format's own reader (delta-rs, hudi-rs, pyiceberg; never
Spark), one row per loader commit built from the commits alone; `*_from_*` are the pure parts."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.model import CHECKPOINTING, LOAD, LOADED, REMOVE, Outcome, TargetCommit
from lakeinlet.incremental.ports import Target
from lakeinlet.incremental.settings import LoaderConfig, TablesSection
from lakeinlet.incremental.targets import build_target, local_settings
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection

if TYPE_CHECKING:
    from lakeinlet.incremental.commands.checkpoint import CheckpointView

DEFAULT_APP_ID = TablesSection().app_id
TABLE_OPTIONS = ("ledger", "spark_scheme", "partition_by")
"""Loader settings of the table that observe's helpers accept by name (with the Iceberg catalog's)."""


def open_target(table_uri: str, aws: AwsSection, target_format: str = "delta",
                app_id: str | None = None, **options: Any) -> Target:
    """The loader's adapter for the table, for reading only (it has no Spark session).

    Args:
        options: the table's loader settings by field name, as given to the loader (`--ledger`
            → `ledger`, `--iceberg-catalog-uri` → `iceberg_catalog_uri`, …): an Iceberg table is
            found through its catalog, and its outcomes beside the ledger.

    Raises:
        TypeError: an option the loader does not have.
        ConfigError: an unknown format.
    """
    config = _config(table_uri, aws, target_format, app_id or DEFAULT_APP_ID, options)
    return build_target(config, _no_spark).target


def _config(table_uri: str, aws: AwsSection, target_format: str, app_id: str,
            options: Mapping[str, Any]) -> LoaderConfig:
    catalog_fields = {f.name for f in dataclasses.fields(IcebergSection)}
    if unknown := sorted(set(options) - catalog_fields - set(TABLE_OPTIONS)):
        raise TypeError(f"unknown target options {unknown}: expected some of "
                        f"{sorted(catalog_fields | set(TABLE_OPTIONS))}")
    tables = TablesSection(changelog="", table=table_uri, target_format=target_format, app_id=app_id,
                           **{k: v for k, v in options.items() if k in TABLE_OPTIONS})
    catalog = IcebergSection(**{k: v for k, v in options.items() if k in catalog_fields})
    return LoaderConfig(tables=tables, iceberg=catalog, aws=aws)


def _no_spark() -> Any:
    raise RuntimeError("lakeinlet.observe.frames only reads: it starts no Spark session")


def local_catalog(target_format: str, folder: str | Path) -> dict[str, str]:
    """Settings for a throw-away local run with its catalog (if the format has one) in `folder`."""
    return local_settings(target_format, str(Path(folder).resolve()))


def target_flags(target_format: str, **options: Any) -> list[str]:
    """The loader's command-line flags for the format and the options observe's helpers take."""
    flags = ["--target-format", target_format]
    for key, value in options.items():
        flags += [f"--{key.replace('_', '-')}", str(value)]
    return flags


# ---- rows ---------------------------------------------------------------------------------------

def target_rows(table_uri: str, aws: AwsSection, target_format: str = "delta",
                columns: Sequence[str] | None = None, **options: Any) -> pa.Table:
    """The target's rows (only `columns`, if given) as the format's own reader returns them;
    Hudi's `_hoodie_*` columns are left out, so every format shows the same columns."""
    return open_target(table_uri, aws, target_format, **options).rows(columns)


def target_frame(table_uri: str, aws: AwsSection, target_format: str = "delta",
                 columns: Sequence[str] | None = None, **options: Any) -> pd.DataFrame:
    """`target_rows` as a pandas frame."""
    return target_rows(table_uri, aws, target_format, columns, **options).to_pandas()


def table_counts(table_uri: str, aws: AwsSection, key: str, target_format: str = "delta",
                 **options: Any) -> dict[str, int]:
    """Rows, distinct `key` values, keys held by more than one row, and source objects (reads
    only the two columns)."""
    rows = target_frame(table_uri, aws, target_format, [key, "_source_key"], **options)
    return counts_from_rows(rows, key)


def counts_from_rows(rows: pd.DataFrame, key: str) -> dict[str, int]:
    per_key = rows[key].value_counts(dropna=False)
    return {"rows": len(rows), "keys": int(rows[key].nunique()),
            "duplicates": int((per_key > 1).sum()), "objects": int(rows["_source_key"].nunique())}


def duplicates(table_uri: str, aws: AwsSection, key: str, target_format: str = "delta",
               **options: Any) -> int:
    """How many values of `key` occur in more than one row of the table (0 = no duplicates)."""
    return table_counts(table_uri, aws, key, target_format, **options)["duplicates"]


# ---- load batches (the target's commits) ----------------------------------------------------------

BATCH_COLUMNS = ["version", "timestamp", "operation", "batch", "start", "position", "objects",
                 "loaded", "not_loaded", "rows", "source_bytes", "data_files", "data_bytes", "reason"]


def load_batches_frame(table_uri: str, aws: AwsSection, target_format: str = "delta",
                       app_id: str | None = None, **options: Any) -> pd.DataFrame:
    """One row per loader commit of the target (loads, removals, checkpoint resets and starts) of
    `app_id` (None: every loader), oldest first: objects, rows and source bytes from the batch's
    outcomes; data files and bytes as the commit itself recorded them, so compacting or vacuuming
    the table later changes nothing here. As far back as the format keeps commits (Hudi's active
    timeline; Iceberg's unexpired snapshots)."""
    commits = open_target(table_uri, aws, target_format, app_id, **options).commits()
    apps = {app_id} if app_id else {c.meta.get("app_id", "") for c in commits if c.operation in CHECKPOINTING}
    outcomes: dict[int, list[Outcome]] = {}
    for app in sorted(apps):
        found = open_target(table_uri, aws, target_format, app, **options).batches_after(-1)
        outcomes |= {version: listed for version, _, listed in found}
    return batches_from_commits(commits, outcomes, app_id)


def batches_from_commits(commits: Iterable[TargetCommit], outcomes: Mapping[int, Sequence[Outcome]],
                         app_id: str | None = None) -> pd.DataFrame:
    """The frame of `load_batches_frame` from the target's commits and the outcomes of its load and
    removal commits by version (what the port's `batches_after` returns)."""
    rows = [_batch_row(c, outcomes.get(c.version, ())) for c in commits if c.operation in CHECKPOINTING
            and (app_id is None or c.meta.get("app_id") == app_id)]
    frame = pd.DataFrame(rows, columns=BATCH_COLUMNS).sort_values("version").reset_index(drop=True)
    frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True)
    return frame.astype({"data_files": "Int64", "data_bytes": "Int64"})


def _batch_row(c: TargetCommit, outcomes: Sequence[Outcome]) -> dict[str, Any]:
    loaded = sum(o.status == LOADED for o in outcomes)
    unknown = c.operation in (LOAD, REMOVE)  # a commit without rows added none; a batch may not say
    return {"version": c.version, "timestamp": c.timestamp, "operation": c.operation,
            "batch": c.meta.get("batch", ""), "start": str(c.start or ""),
            "position": str(c.position or ""), "objects": len(outcomes), "loaded": loaded,
            "not_loaded": len(outcomes) - loaded, "rows": sum(o.rows for o in outcomes),
            "source_bytes": sum(o.obj.size for o in outcomes),
            "data_files": c.files if c.files is not None or unknown else 0,
            "data_bytes": c.bytes if c.bytes is not None or unknown else 0,
            "reason": c.meta.get("reason", "")}


def routes_frame(changelog_uri: str, routes_file: str, aws: AwsSection, **options: Any) -> pd.DataFrame:
    """One row per route of a routes file: its table and format, and the columns of `status_row`
    (checkpoint, lag, freshness).
    `options`: Iceberg catalog settings the routes do not set themselves (as for `open_target`)."""
    from lakeinlet.changelog.reader import DeltaChangelog
    from lakeinlet.incremental.commands.checkpoint import show
    from lakeinlet.incremental.routes import RoutesSection, routes_of

    config = LoaderConfig(tables=TablesSection(changelog=changelog_uri), aws=aws,
                          iceberg=IcebergSection(**options), routes=RoutesSection(routes=routes_file))
    changelog = DeltaChangelog(changelog_uri, aws)
    rows = []
    for route in routes_of(config):
        t = route.config.tables
        view = show(build_target(route.config, _no_spark).target, changelog)
        rows.append({"route": route.name, "table": t.table, "format": t.target_format, **status_row(view)})
    return pd.DataFrame(rows)


def freshness_frame(table_uri: str, changelog_uri: str, aws: AwsSection, target_format: str = "delta",
                    app_id: str | None = None, **options: Any) -> pd.DataFrame:
    """One row for the table, as `lakeinlet-load status` sees it: its table and format, and the
    columns of `status_row` (checkpoint, lag, freshness). `options`: as for `open_target`."""
    from lakeinlet.changelog.reader import DeltaChangelog
    from lakeinlet.incremental.commands.checkpoint import show

    view = show(open_target(table_uri, aws, target_format, app_id, **options),
                DeltaChangelog(changelog_uri, aws))
    return pd.DataFrame([{"table": table_uri, "format": target_format, **status_row(view)}])


def status_row(view: CheckpointView) -> dict[str, Any]:
    """A table's checkpoint, the changelog head, how far behind it is (versions, events, the bytes
    they announce, seconds since the oldest pending commit) and how fresh it is: `freshness_seconds` since
    `newest_event_time`, the newest event time its commits record, and the changelog version
    their checkpoint covers (None where no commit records them yet)."""
    position, mark = view.checkpoint.position, view.watermark
    fresh = view.freshness_seconds
    return {"checkpoint": str(position) if position else None, "head": view.head,
            "lag_versions": view.lag_versions, "lag_events": view.lag_events,
            "lag_bytes": view.lag_bytes, "lag_seconds": round(view.lag_seconds, 1),
            "newest_event_time": pd.Timestamp(mark.event_time) if mark and mark.event_time else None,
            "changelog_version": mark.changelog_version if mark else None,
            "freshness_seconds": None if fresh is None else round(fresh, 1)}
