"""The changelog's schema and partitioning: one row per object event, the contract between the jobs."""

from __future__ import annotations

from datetime import UTC

import pyarrow as pa

from lakeinlet.events import ObjectEvent, ReceivedEvent

_TS = pa.timestamp("us", tz="UTC")

CHANGELOG_SCHEMA = pa.schema(
    [
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("bucket", pa.string(), nullable=False),
        pa.field("key", pa.string(), nullable=False),
        pa.field("size", pa.int64()),
        pa.field("etag", pa.string()),
        pa.field("version_id", pa.string()),
        pa.field("sequencer", pa.string()),
        pa.field("event_name", pa.string(), nullable=False),
        pa.field("event_time", _TS, nullable=False),
        pa.field("region", pa.string()),
        pa.field("envelope", pa.string(), nullable=False),
        pa.field("message_id", pa.string(), nullable=False),
        pa.field("received_at", _TS, nullable=False),
        pa.field("poll_batch", pa.string(), nullable=False),
        pa.field("received_date", pa.string(), nullable=False),
    ]
)
"""One row per object event. Partitioned by `received_date` (YYYY-MM-DD, UTC) so that a reader
that knows its checkpoint time touches only recent partitions; readers that follow commits read
the files each commit added, so partitioning is a pruning aid, not a correctness requirement."""

CHANGELOG_PARTITION_BY = ["received_date"]


def to_changelog_table(rows: list[ReceivedEvent]) -> pa.Table:
    """Build the Arrow table of changelog rows for one commit."""
    cols: dict[str, list[object]] = {f.name: [] for f in CHANGELOG_SCHEMA}
    for r in rows:
        e = r.event
        values = {
            "event_id": e.event_id, "bucket": e.bucket, "key": e.key, "size": e.size,
            "etag": e.etag, "version_id": e.version_id, "sequencer": e.sequencer,
            "event_name": e.event_name, "event_time": e.event_time, "region": e.region,
            "envelope": e.envelope, "message_id": r.message_id, "received_at": r.received_at,
            "poll_batch": r.poll_batch,
            "received_date": r.received_at.astimezone(UTC).strftime("%Y-%m-%d"),
        }
        for name, value in values.items():
            cols[name].append(value)
    return pa.Table.from_pydict(cols, schema=CHANGELOG_SCHEMA)


def from_changelog_row(row: dict[str, object]) -> ObjectEvent:
    """Rebuild the ObjectEvent from one changelog row (as a dict from `to_pylist`)."""
    return ObjectEvent(
        bucket=str(row["bucket"]), key=str(row["key"]), event_name=str(row["event_name"]),
        event_time=row["event_time"],  # type: ignore[arg-type]
        size=row.get("size"),  # type: ignore[arg-type]
        etag=row.get("etag"),  # type: ignore[arg-type]
        version_id=row.get("version_id"),  # type: ignore[arg-type]
        sequencer=row.get("sequencer"),  # type: ignore[arg-type]
        region=row.get("region"),  # type: ignore[arg-type]
        envelope=str(row.get("envelope") or "s3"),
    )
