"""A batch that creates a table settles conflicting types between its own objects the way a batch
against an existing table does: the types most objects agree on win, the others are set aside."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.events import ObjectEvent
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _json(s3: Any, bucket: str, key: str, rows: list[dict[str, Any]], at: datetime) -> ObjectEvent:
    event = put(s3, bucket, key, "".join(json.dumps(r) + "\n" for r in rows).encode())
    return ObjectEvent(event.bucket, event.key, event.event_name, at, event.size, event.etag)


def test_a_first_batch_of_mixed_types_keeps_the_types_most_objects_agree_on(
        spark: Any, aws: AwsSection, target_format: str) -> None:
    landing, lake, s3 = new_lake(aws)
    t0 = datetime.now(UTC)
    first = [_json(s3, landing, "in/a.json", [{"id": 1}], t0),
             _json(s3, landing, "in/b.json", [{"id": 2, "price": 1.5}], t0 + timedelta(seconds=1)),
             _json(s3, landing, "in/c.json", [{"id": "abc"}], t0 + timedelta(seconds=2))]
    p = parts(make_config(aws, lake, "json", schema=None, target_format=target_format), spark)
    record(p.changelog, first)
    p.loader().drain()
    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert ledger["in/c.json"]["status"] == "schema_conflict"
    assert "'id' is bigint in most objects of the batch that creates the table but string" in \
        ledger["in/c.json"]["reason"]
    assert (ledger["in/a.json"]["status"], ledger["in/b.json"]["status"]) == ("loaded", "loaded")
    assert target_rows(p).schema.field("id").type == pa.int64()
    # The well-formed object after it loads: the table's types were not ruined by the first batch.
    record(p.changelog, [_json(s3, landing, "in/d.json", [{"id": 7}], t0 + timedelta(seconds=3))])
    p.loader().drain()
    assert {r["key"]: r["status"] for r in ledger_rows(p)}["in/d.json"] == "loaded"
    assert sorted(target_rows(p).column("id").to_pylist()) == [1, 2, 7]
