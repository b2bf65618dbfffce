"""The operator's views (`lakeinlet.observe.frames`) over a table of each format the loader wrote with
Spark: load batches from the commits alone, unchanged when the format's own compaction replaces the
data files; rows and counts read by the format's non-Spark reader.

With LAKEINLET_RECORD_OBSERVE=<folder> the commits are also written there as the recorded values
the unit tests read (tests/data/observe/compacted_<format>.json).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from lakeinlet.incremental.model import RESET, Position
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.wiring import Parts
from lakeinlet.observe import frames as observe
from lakeinlet.storage import storage_options
from tests.spark.loader_helpers import make_config, new_lake, parts, put, record, upload

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def compact(p: Parts, spark: Any) -> int:
    """Rewrite the table's data files with the format's own tool; returns how many it has now."""
    target, fmt = p.target, p.config.tables.target_format
    if fmt == "delta":
        dt = DeltaTable(target.uri, storage_options=storage_options(p.config.aws, target.uri))
        dt.optimize.compact()
        dt.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
        return len(DeltaTable(target.uri, storage_options=storage_options(p.config.aws, target.uri))
                   .file_uris())
    if fmt == "iceberg":
        cat = target.catalog
        target.session().sql(f"CALL {cat.name}.system.rewrite_data_files(table => '{cat.spark_name}', "
                             "options => map('min-input-files', '2'))").collect()
        return len(list(target.table().scan().plan_files()))
    spark.sql(f"CALL run_clustering(path => '{target.spark_uri}')").collect()
    return len(target.table().get_file_slices())


def options_of(config: LoaderConfig) -> dict[str, str]:
    """What observe needs besides the table's URI and format: the Iceberg catalog, if any."""
    uri = config.iceberg.iceberg_catalog_uri
    return {"iceberg_catalog_uri": uri} if config.tables.target_format == "iceberg" and uri else {}


def load_and_reset(p: Parts, aws: AwsSection, landing: str, s3: Any) -> list[int]:
    """Four JSON files (5 rows each) and a corrupt one in two changelog versions, loaded in batches
    of two objects, then a checkpoint reset; returns the uploaded order ids."""
    files = make_files("json", 4, rows_per_file=5)
    events = upload(s3, landing, files)
    record(p.changelog, events[:3])
    record(p.changelog, [events[3], put(s3, landing, "json/broken.jsonl", b"\x00\x01 not json\n" * 3)])
    p.loader().drain()
    with p.hold():
        p.target.commit_position(Position(1), Position(0), "look again", RESET)
    return sorted(r["order_id"] for f in files for r in f.rows)


@pytest.mark.timeout(900)
def test_views_of_every_format_survive_compaction(spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    config = make_config(aws, lake, "json", target_format=target_format, max_files=2)
    p = parts(config, spark)
    ids = load_and_reset(p, aws, landing, s3)
    table, opts = config.tables.table or "", options_of(config)
    before = observe.load_batches_frame(table, aws, target_format, **opts)
    assert before["operation"].tolist() == ["load", "load", "load", "checkpoint-reset"]
    assert before[["objects", "loaded", "rows"]].values.tolist() == \
        [[2, 2, 10], [2, 2, 10], [1, 0, 0], [0, 0, 0]]
    assert (before["start"].tolist(), before["position"].tolist()) == (["start", "0@2", "1@1", "1"],
                                                                       ["0@2", "1@1", "1", "0"])
    assert (before["data_files"][:2] > 0).all() and (before["data_bytes"][:2] > 1000).all()
    assert before["reason"].iloc[-1] == "look again" and before["data_files"].iloc[-1] == 0
    files_now = compact(p, spark)
    assert files_now < before["data_files"].sum()  # the files the batches wrote are gone
    pd.testing.assert_frame_equal(observe.load_batches_frame(table, aws, target_format, **opts), before)
    assert observe.table_counts(table, aws, "order_id", target_format, **opts) == \
        {"rows": 20, "keys": 20, "duplicates": 0, "objects": 4}
    rows = observe.target_frame(table, aws, target_format, **opts)
    assert sorted(rows["order_id"]) == ids and set(rows["_ingest_batch"]) <= set(before["batch"])
    assert not [c for c in rows.columns if c.startswith("_hoodie")]
    if folder := os.environ.get("LAKEINLET_RECORD_OBSERVE"):
        save(p, Path(folder) / f"compacted_{target_format}.json")


def save(p: Parts, path: Path) -> None:
    """The target's commits (and Iceberg's outcome files) as the unit tests read them."""
    commits = p.target.commits()
    sidecars = {}
    if p.config.tables.target_format == "iceberg":
        batches = {c.meta["batch"] for c in commits if c.operation == "load"}
        sidecars = {b: [o.to_list() for o in p.target.outcomes.get(b)] for b in sorted(batches)}
    fmt = p.config.tables.target_format
    doc = {"recorded": f"tests/spark/test_observe_formats.py, {fmt} target after compaction",
           "commits": [{"version": c.version, "timestamp": c.timestamp.isoformat(timespec="milliseconds"),
                        "meta": dict(sorted(c.meta.items())), "files": c.files, "bytes": c.bytes}
                       for c in commits], "sidecars": sidecars}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n")
