"""The loader's bounds over the fakes, as the wiring builds them from settings: keys Hadoop's Path
rewrites, buckets off --bucket or invalid, and lakeinlet's own tables are set aside with a reason
before any HEAD or read; the good objects of the same batch load."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.incremental.bounds import Bounds, bounds_of
from lakeinlet.incremental.model import FILTERED, PlannedObject
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.incremental.ports import ObjectHead, ReadBatch, Unreadable
from lakeinlet.incremental.routes import RoutesSection, routes_of, unrouted_config
from lakeinlet.incremental.settings import (
    CleanupSection,
    LoaderConfig,
    PlanSection,
    RunSection,
    TablesSection,
)
from lakeinlet.incremental.wiring import build
from lakeinlet.own import OwnLocations
from tests.fakes import T0, FakeChangelog, FakeLedger, MemoryTarget

pytestmark = pytest.mark.unit

REWRITTEN = {  # key → what its ledger reason names
    "json/../private/x.json": "a `..` segment", "json//x.json": "an empty segment (`//`)",
    "./json/x.json": "a `.` segment", "json/./x.json": "a `.` segment",
    "json/dir/": "a trailing `/`", "/json/x.json": "a leading `/`",
}


@dataclass
class SeenStore:
    """Every object is there (10 bytes); remembers what was HEADed."""

    headed: list[tuple[str, str]] = field(default_factory=list)

    def head_many(self, objs: Sequence[PlannedObject]) -> dict[tuple[str, str], ObjectHead]:
        self.headed += [(o.bucket, o.key) for o in objs]
        return {(o.bucket, o.key): ObjectHead(10, o.etag) for o in objs}


@dataclass
class SeenReader:
    read_keys: list[tuple[str, str]] = field(default_factory=list)

    def read(self, objs: Sequence[PlannedObject], batch_id: str, table_schema: Any, heads: Any = None,
             single_pass: bool = False) -> ReadBatch:
        self.read_keys += [(o.bucket, o.key) for o in objs]
        return ReadBatch(None, None, {(o.bucket, o.key): 2 for o in objs}, {}, {})


def row(version: int, i: int, bucket: str, key: str) -> dict[str, Any]:
    return FakeChangelog._row(version, i, key, False) | {"bucket": bucket, "event_id": f"{bucket}/{key}"}


Ledger = dict[tuple[str, str], tuple[str, str]]


def drain(config: LoaderConfig, objects: Sequence[tuple[str, str]]) -> tuple[Ledger, SeenStore, SeenReader]:
    """One drain of the loader the wiring builds from `config`, over fakes holding `objects`;
    the ledger's (status, reason) per object, the store and the reader."""
    changelog, store, reader, ledger = FakeChangelog(), SeenStore(), SeenReader(), FakeLedger()
    changelog.versions.append([row(0, i, b, k) for i, (b, k) in enumerate(objects)])
    loader = build(config).loader(record=False)  # its target is replaced: the real one is never read
    loader.changelog, loader.store, loader.target, loader.ledger = changelog, store, MemoryTarget(), ledger
    loader.reader = lambda: reader
    loader.caps = replace(loader.caps, max_files=100)
    loader.drain()
    return {(o.obj.bucket, o.obj.key): (o.status, o.reason) for _, o in ledger.rows}, store, reader


def config(tmp_path: Path, **plan: Any) -> LoaderConfig:
    tables = TablesSection(changelog=str(tmp_path / "changelog"), table=str(tmp_path / "t"))
    return LoaderConfig(tables=tables, plan=PlanSection(**plan))


def test_keys_hadoop_rewrites_are_set_aside_before_any_head_beside_good_ones(tmp_path: Path) -> None:
    good = [("land", "json/a.json"), ("land", "json/x..json"), ("land", "json/.hidden/b.json")]
    bad = [("land", k) for k in REWRITTEN]
    ledger, store, reader = drain(config(tmp_path, prefix=("json/",), include_hidden=True), [*good, *bad])
    assert {k: ledger[k][0] for k in good} == dict.fromkeys(good, "loaded")
    for key, segment in REWRITTEN.items():
        status, reason = ledger[("land", key)]
        assert status == FILTERED and segment in reason, (key, reason)
        assert "Hadoop's Path would read" in reason, reason
    assert "`private/x.json` instead" in ledger[("land", "json/../private/x.json")][1]
    assert store.headed == reader.read_keys == good


def test_buckets_off_the_allow_list_or_invalid_are_set_aside_and_the_backfill_bucket_is_allowed(
        tmp_path: Path) -> None:
    cfg = replace(config(tmp_path, buckets=("land", "land2")), run=RunSection(backfill_bucket="listed"))
    good = [("land", "a.json"), ("land2", "b.json"), ("listed", "c.json")]
    bad = {("other", "a.json"): "bucket not in --bucket (land, land2, listed): add other to --bucket",
           ("bad bucket", "a.json"): "invalid bucket name 'bad bucket'",
           ("arn:aws:s3:::x", "a.json"): "invalid bucket name"}
    ledger, store, reader = drain(cfg, [*good, *bad])
    assert {k: ledger[k][0] for k in good} == dict.fromkeys(good, "loaded")
    assert {k: ledger[k][0] for k in bad} == dict.fromkeys(bad, FILTERED)
    assert all(why in ledger[k][1] for k, why in bad.items()), ledger
    assert store.headed == reader.read_keys == good


def test_without_bucket_any_valid_bucket_loads(tmp_path: Path) -> None:
    objects = [("any", "a.json"), ("Legacy_Bucket", "b.json"), ("a/b", "c")]
    ledger, _, reader = drain(config(tmp_path), objects)
    assert reader.read_keys == [("any", "a.json"), ("Legacy_Bucket", "b.json")]
    assert ledger[("a/b", "c")][0] == FILTERED


def test_events_under_the_lakes_own_tables_are_set_aside_without_a_head(tmp_path: Path) -> None:
    tables = TablesSection(changelog="s3://lake/lakeinlet/changelog", table="s3://lake/tables/orders")
    cfg = LoaderConfig(tables=tables, plan=PlanSection(lake=("s3://lake/warehouse",)),
                       cleanup=CleanupSection(after_load="archive:s3://lake/archive"))
    own = {"lakeinlet/changelog/_delta_log/00000000000000000000.json": "s3://lake/lakeinlet/changelog/",
           "lakeinlet/changelog/day=2026-11-01/part-0.parquet": "s3://lake/lakeinlet/changelog/",
           "tables/orders/part-0.parquet": "s3://lake/tables/orders/",
           "tables/orders_ledger/_delta_log/0.json": "s3://lake/tables/orders_ledger/",
           "tables/orders_quarantine/part-0.parquet": "s3://lake/tables/orders_quarantine/",
           "tables/orders_ledger_cleanup/part-0.parquet": "s3://lake/tables/orders_ledger_cleanup/",
           "tables/orders_ledger_staging/b1/000000.gz": "s3://lake/tables/orders_ledger_staging/",
           "archive/land/a.json": "s3://lake/archive/",
           "warehouse/db/t/metadata/v1.json": "s3://lake/warehouse/"}
    good = [("lake", "incoming/a.json"), ("lake", "tables/orders2/a.json"), ("lake", "lakeinlet/changelog")]
    ledger, store, _ = drain(cfg, [*good, *(("lake", k) for k in own)])
    for key, where in own.items():
        assert ledger[("lake", key)] == (FILTERED, f"lakeinlet's own table {where}: never loaded nor "
                                                   "cleaned up (lakeinlet writes there)"), key
    assert store.headed == good


def test_every_route_and_the_unrouted_record_know_every_routes_tables_as_own() -> None:
    """A route whose settings a base config cannot hold (an Iceberg route beside a route with a
    Glue --catalog) still knows them: the routes are derived once, from the run's settings."""
    routes = RoutesSection(route_def=(
        "orders: table=s3://lake/t/orders; prefix=o/; catalog=glue:db.orders",
        "clicks: table=s3://lake/t/clicks; prefix=c/; ledger=s3://lake/l/clicks; target_format=iceberg; "
        "iceberg_catalog_uri=jdbc:sqlite:/tmp/x.db"))
    cfg = LoaderConfig(tables=TablesSection(changelog="s3://lake/cl"), routes=routes)
    owned = ["t/orders/x", "t/orders_ledger/x", "t/clicks/x", "l/clicks/x", "l/clicks_cleanup/x",
             "cl_unrouted/x", "cl_unrouted_ledger/x", "cl/x"]
    for each in [*(r.config for r in routes_of(cfg)), unrouted_config(cfg)]:
        bounds = bounds_of(each)
        assert [k for k in owned if (bounds.verdict("lake", k) or "").startswith("lakeinlet's own")] == owned
        assert bounds.verdict("lake", "o/t/orders/x") is None


def test_an_invalid_bucket_name_on_head_sets_the_object_aside(in_process_aws: AwsSection) -> None:
    """A bucket name botocore refuses (ParamValidationError) failed every run of the batch."""
    s3 = client("s3", in_process_aws)
    s3.create_bucket(Bucket="land")
    s3.put_object(Bucket="land", Key="a.json", Body=b"{}")
    objs = [PlannedObject(b, "a.json", None, None, 2, f"e-{b}", T0 + timedelta(seconds=1), 0)
            for b in ("land", "a b", "x" * 300)]
    heads = S3ObjectStore(in_process_aws, s3=s3).head_many(objs)
    assert isinstance(heads[("land", "a.json")], ObjectHead)
    for bucket in ("a b", "x" * 300):
        head = heads[(bucket, "a.json")]
        assert isinstance(head, Unreadable) and head.status == FILTERED
        assert "Invalid bucket name" in head.reason


def test_bounds_refuse_an_own_location_before_the_allow_list() -> None:
    bounds = Bounds(frozenset({"land"}), OwnLocations.of(["s3://land/lake"]))
    assert (bounds.verdict("land", "lake/t/x") or "").startswith("lakeinlet's own table s3://land/lake/")
    assert bounds.verdict("land", "lakehouse/x") is None
