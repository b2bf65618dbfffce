"""One contract over every target: the in-memory one the loader's unit tests stand on, and the
Delta, Hudi and Iceberg adapters. Staging shows nothing, a publish shows rows and checkpoint
together, a stale start conflicts, removals and replacements delete by object, views agree."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lakeinlet.errors import CommitConflict
from lakeinlet.incremental.model import (
    FILTERED,
    LOADED,
    REMOVED,
    RESET,
    Outcome,
    PlannedObject,
    Position,
    Watermark,
)
from lakeinlet.incremental.ports import Load, ReadBatch, Removal, Target
from tests.fakes import MemoryTarget

NOW = datetime(2026, 11, 25, tzinfo=UTC)
SPARK = [pytest.mark.contract, pytest.mark.spark, pytest.mark.integration]
TARGETS = [pytest.param("memory", marks=pytest.mark.contract),
           *(pytest.param(f, marks=SPARK) for f in ("delta", "hudi", "iceberg"))]


@dataclass
class Subject:
    target: Target
    batch: Callable[[Sequence[PlannedObject]], ReadBatch]
    """A read batch of two rows per object (order ids from the key and etag)."""


def obj(key: str, etag: str = "v1") -> PlannedObject:
    return PlannedObject("land", key, etag, None, 10, f"id-{key}-{etag}", NOW, 0)


def ids(o: PlannedObject) -> list[int]:
    base = 100 * (ord(o.key[0]) - ord("a")) + 10 * int(o.etag[1:] if o.etag else 0)
    return [base + 1, base + 2]


def lineage(o: PlannedObject, order_id: int) -> dict[str, Any]:
    return {"order_id": order_id, "_source_bucket": o.bucket, "_source_key": o.key,
            "_source_etag": o.etag, "_source_event_time": o.event_time, "_ingest_batch": "b"}


def memory_batch(objs: Sequence[PlannedObject]) -> ReadBatch:
    rows = [lineage(o, i) for o in objs for i in ids(o)]
    return ReadBatch(rows, None, {(o.bucket, o.key): 2 for o in objs}, {}, {})


def spark_batch(spark: Any) -> Callable[[Sequence[PlannedObject]], ReadBatch]:
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = ("order_id bigint, _source_bucket string, _source_key string, _source_etag string, "
              "_source_event_time timestamp, _ingest_batch string")

    def make(objs: Sequence[PlannedObject]) -> ReadBatch:
        rows = [tuple(lineage(o, i).values()) for o in objs for i in ids(o)]
        df = spark.createDataFrame(rows, schema)
        return ReadBatch(df, to_arrow_schema(df.schema), {(o.bucket, o.key): 2 for o in objs}, {}, {})
    return make


@pytest.fixture(params=TARGETS)
def subject(request: pytest.FixtureRequest) -> Iterator[Subject]:
    """The target, held as a loader run holds it (Hudi: its writer lease)."""
    if request.param == "memory":
        yield Subject(MemoryTarget(), memory_batch)
        return
    from tests.spark.loader_helpers import make_config, new_lake, parts

    spark, aws = request.getfixturevalue("spark"), request.getfixturevalue("aws")
    _, lake, _ = new_lake(aws)
    p = parts(make_config(aws, lake, target_format=request.param), spark)
    with p.hold():
        yield Subject(p.target, spark_batch(spark))
    p.target.release()


def loaded(objs: Sequence[PlannedObject]) -> list[Outcome]:
    return [Outcome(o, LOADED, "", 2) for o in objs]


def publish_load(s: Subject, objs: Sequence[PlannedObject], start: int, end: int,
                 replace: Sequence[PlannedObject] = ()) -> list[Outcome]:
    staged = s.target.stage(Load(s.batch(objs), loaded(objs), replace), Position(start), Position(end),
                            f"batch-{end}")
    s.target.publish(staged)
    return staged.outcomes


def visible(s: Subject) -> Counter[int]:
    try:
        return Counter(s.target.rows(["order_id"]).column("order_id").to_pylist())
    except FileNotFoundError:
        return Counter()


def test_a_staged_load_shows_nothing_until_published(subject: Subject) -> None:
    a, b = obj("a"), obj("b")
    change = Load(subject.batch([a, b]), loaded([a, b]))
    staged = subject.target.stage(change, Position(-1), Position(0), "b0")
    assert visible(subject) == Counter() and subject.target.checkpoint().position is None
    subject.target.publish(staged)
    assert visible(subject) == Counter(ids(a) + ids(b))
    assert subject.target.checkpoint().position == Position(0)
    [(_, batch, outcomes)] = subject.target.batches_after(-1)
    assert batch == "b0" and sorted((o.obj.key, o.status, o.rows) for o in outcomes) == [
        ("a", LOADED, 2), ("b", LOADED, 2)]


def test_a_stale_start_conflicts_and_shows_nothing(subject: Subject) -> None:
    a, b = obj("a"), obj("b")
    publish_load(subject, [a], -1, 0)
    with pytest.raises(CommitConflict):
        subject.target.publish(subject.target.stage(
            Load(subject.batch([b]), loaded([b])), Position(-1), Position(1), "late"))
    assert visible(subject) == Counter(ids(a)) and subject.target.checkpoint().position == Position(0)


def test_a_discarded_stage_never_shows(subject: Subject) -> None:
    a, b = obj("a"), obj("b")
    dropped = subject.target.stage(Load(subject.batch([a]), loaded([a])), Position(-1), Position(0), "x")
    dropped.discard()
    publish_load(subject, [b], -1, 0)
    assert visible(subject) == Counter(ids(b))


def test_a_removal_deletes_its_objects_rows_with_the_checkpoint(subject: Subject) -> None:
    a, b = obj("a"), obj("b")
    publish_load(subject, [a, b], -1, 0)
    staged = subject.target.stage(Removal([a], []), Position(0), Position(1), "rm")
    subject.target.publish(staged)
    assert [(o.obj.key, o.status, o.rows) for o in staged.outcomes] == [("a", REMOVED, 2)]
    assert visible(subject) == Counter(ids(b)) and subject.target.checkpoint().position == Position(1)


def test_a_replacing_load_deletes_the_earlier_versions_rows(subject: Subject) -> None:
    a1, a2, b = obj("a", "v1"), obj("a", "v2"), obj("b")
    publish_load(subject, [a1, b], -1, 0)
    outcomes = publish_load(subject, [a2], 0, 1, replace=[a2])
    assert [(o.obj.key, o.replaced_rows) for o in outcomes] == [("a", 2)]
    assert visible(subject) == Counter(ids(a2) + ids(b))


def test_a_position_commit_moves_the_checkpoint_only(subject: Subject) -> None:
    a = obj("a")
    gap = '{"through": 3, "changes": "--prefix o/ → o/, all/"}'  # non-ASCII, as a gap line has
    subject.target.stamp = {"filters": '{"prefix": ["o/"]}', "filters_gap": gap}
    publish_load(subject, [a], -1, 0)
    ck = subject.target.checkpoint()
    assert (ck.filters, ck.filters_gap) == ('{"prefix": ["o/"]}', gap)  # kept beside it
    subject.target.stamp = {}
    subject.target.commit_position(Position(0), Position(7), "replay", RESET)
    assert subject.target.checkpoint().position == Position(7) and visible(subject) == Counter(ids(a))
    assert subject.target.checkpoint().filters is None  # as of the newest checkpoint
    newest = subject.target.commits(1)[0]
    assert newest.operation == RESET and newest.meta["reason"] == "replay"
    assert [v for v, _, _ in subject.target.batches_after(-1)] == [
        c.version for c in subject.target.commits() if c.operation == "load"]


def test_every_commit_records_the_newest_event_it_covers_and_it_never_goes_back(subject: Subject) -> None:
    def at(o: PlannedObject, minutes: int) -> PlannedObject:
        return replace(o, event_time=NOW + timedelta(minutes=minutes))

    a, b, gone = at(obj("a"), 1), at(obj("b"), 0), at(obj("g"), 2)
    decided = [Outcome(gone, FILTERED, "key outside --prefix")]
    subject.target.publish(subject.target.stage(
        Load(subject.batch([a]), [*loaded([a]), *decided]), Position(-1), Position(0), "b0"))
    assert subject.target.checkpoint().watermark == Watermark(NOW + timedelta(minutes=2), 0)
    publish_load(subject, [b], 0, 1)  # an older event, later in the changelog
    assert subject.target.checkpoint().watermark == Watermark(NOW + timedelta(minutes=2), 1)
    subject.target.publish(subject.target.stage(Removal([b], []), Position(1), Position(2), "rm-b"))
    assert subject.target.checkpoint().watermark == Watermark(NOW + timedelta(minutes=2), 2)
    subject.target.publish(subject.target.stage(Removal([at(a, 3)], []), Position(2), Position(3), "rm-a"))
    assert subject.target.checkpoint().watermark == Watermark(NOW + timedelta(minutes=3), 3)
    subject.target.commit_position(Position(3), Position(0), "replay", RESET)
    assert subject.target.commits(1)[0].watermark == Watermark(NOW + timedelta(minutes=3), 0)
    assert subject.target.checkpoint().watermark == Watermark(NOW + timedelta(minutes=3), 0)
