"""End to end on moto (s3a): uploads → changelog rows → loader → Delta table, exactly once."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from datetime import UTC
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parts,
    put,
    record,
    target_rows,
    upload,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv"])
def test_uploads_land_once_with_lineage(spark: Any, aws: AwsSection, fmt: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files(fmt, 6, rows_per_file=4)
    events = upload(s3, landing, files)
    p = parts(make_config(aws, lake, fmt), spark)
    record(p.changelog, events[:3])
    record(p.changelog, events[3:] + events[:2])  # duplicate notifications in a later commit
    summary = p.loader().drain()
    table = target_rows(p)
    expected = sorted(r["order_id"] for f in files for r in f.rows)
    assert sorted(table.column("order_id").to_pylist()) == expected
    by_key = Counter(table.column("_source_key").to_pylist())
    assert by_key == {f.key: 4 for f in files}
    assert set(table.column("_source_bucket").to_pylist()) == {landing}
    assert set(table.column("_source_etag").to_pylist()) == {e.etag for e in events}
    assert None not in table.column("_ingest_batch").to_pylist()
    assert summary.statuses["loaded"] == 6
    assert p.target.checkpoint().position is not None
    assert sorted((r["key"], r["status"], r["rows"]) for r in ledger_rows(p)) == \
        sorted((f.key, "loaded", 4) for f in files)


def test_overwrite_loads_each_version_once(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    first, second = make_files("parquet", 1, 3), make_files("parquet", 1, 3, start=7)
    p = parts(make_config(aws, lake), spark)
    e1 = put(s3, landing, first[0].key, first[0].body)
    record(p.changelog, [e1, e1])
    p.loader().drain()
    e2 = put(s3, landing, first[0].key, second[0].body)  # overwrite, new etag
    record(p.changelog, [e2])
    record(p.changelog, [e2, e1])  # redelivery of both versions later
    p.loader().drain()
    ids = sorted(target_rows(p).column("order_id").to_pylist())
    assert ids == sorted(r["order_id"] for r in first[0].rows + second[0].rows)


def test_spark_reads_the_table_from_its_file_list(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("json", 3, 2)
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, upload(s3, landing, files))
    p.loader().drain()
    from deltalake import DeltaTable

    from lakeinlet.storage import storage_options
    dt = DeltaTable(p.target.uri, storage_options=storage_options(aws, p.target.uri))
    uris = ["s3a://" + u[len("s3://"):] for u in dt.file_uris()]
    df = spark.read.option("basePath", f"s3a://{lake}/orders").parquet(*uris)
    assert sorted(r["order_id"] for r in df.collect()) == sorted(r["order_id"] for f in files for r in f.rows)
    assert df.schema["ts"].dataType.simpleString() == "timestamp"


def test_keys_with_spaces_plus_and_percent_keep_their_lineage(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    body = make_files("parquet", 2, 2)
    keys = ["in/year=2026/with space+plus.parquet", "in/100%/ünï code.parquet"]
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, k, f.body) for k, f in zip(keys, body, strict=True)])
    p.loader().drain()
    table = target_rows(p)
    assert Counter(table.column("_source_key").to_pylist()) == {k: 2 for k in keys}
    # the partition folder is a string column of its key's rows (`key_columns`), null for the other key
    assert {(r["_source_key"], r["year"]) for r in table.to_pylist()} == {(keys[0], "2026"), (keys[1], None)}


@pytest.mark.parametrize("lookup", ["map", "join", "join on the path"])
@pytest.mark.parametrize("fmt", ["parquet", "json"])
def test_lineage_by_map_and_by_join_is_exact(spark: Any, aws: AwsSection, fmt: str, lookup: str,
                                            monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """Every lineage column, event times to the microsecond, through both lookups (a literal
    map for a few objects or rows, a broadcast join past MAP_LOOKUP_MAX and MAP_PROBE_BUDGET),
    for a one-pass Parquet batch and a checked JSON batch; keys whose characters a path must
    escape keep theirs. The join is on the paths' 64-bit hashes, or on the paths themselves when
    two of the batch's paths share a hash ("join on the path": as if they did)."""
    from datetime import datetime, timedelta

    from lakeinlet.incremental.read import lineage as read_lineage
    from lakeinlet.incremental.read import lineage_hash

    monkeypatch.setattr(read_lineage, "MAP_LOOKUP_MAX", 64 if lookup == "map" else 0)
    monkeypatch.setattr(read_lineage, "MAP_PROBE_BUDGET", 10**9 if lookup == "map" else 0)
    hashed: list[bool] = []  # per join: whether it was on the hashes
    distinct = lineage_hash.distinct_hashes

    def spy(*args: Any) -> bool:
        hashed.append(distinct(*args) and lookup == "join")
        return hashed[-1]

    monkeypatch.setattr(lineage_hash, "distinct_hashes", spy)
    landing, lake, s3 = new_lake(aws)
    files = make_files(fmt, 3, rows_per_file=2)
    keys = [f"in/{i} it's 100%+ünï{{}}[1].{fmt}" for i in range(len(files))]
    events = [put(s3, landing, k, f.body) for k, f in zip(keys, files, strict=True)]
    times = [datetime(2026, 1, 2, 3, 4, 5, 123456 + i, tzinfo=UTC) - timedelta(days=400 * i)
             for i in range(3)]
    events = [replace(e, event_time=t) for e, t in zip(events, times, strict=True)]
    p = parts(make_config(aws, lake, fmt), spark)
    record(p.changelog, events)
    with caplog.at_level(logging.INFO, logger="lakeinlet"):
        assert p.loader().drain().statuses["loaded"] == 3
    assert not [r for r in caplog.records if r.getMessage() in ("reread", "file_index_fallback")]
    got = Counter((r["_source_bucket"], r["_source_key"], r["_source_etag"], r["_source_event_time"])
                  for r in target_rows(p).to_pylist())
    assert got == {(landing, e.key, e.etag, e.event_time): 2 for e in events}
    assert hashed == ([] if lookup == "map" else [lookup == "join"])
