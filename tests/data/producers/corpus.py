"""What a producer wrote and what a loader must make of it: the events S3 sent, in the changelog
commits a poller would have made, the data rows, the artefacts and the objects set aside."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

from lakeinlet.events import ObjectEvent
from lakeinlet.sources.envelopes import parse


@dataclass(frozen=True)
class Produced:
    """One producer's output in one landing bucket."""

    route: str
    """The route of tests/data/producers/routes.toml that loads it."""
    commits: tuple[tuple[ObjectEvent, ...], ...]
    """The events S3 sent, grouped as the changelog commits that hold them (a drain runs between)."""
    rows: tuple[dict[str, Any], ...]
    """Every data row once, with the partition columns its key gives."""
    loaded: frozenset[str]
    """Keys the ledger must record `loaded`."""
    filtered: dict[str, str] = field(default_factory=dict)
    """Artefact key -> a phrase its `filtered` reason holds (never loaded, never corrupt)."""
    set_aside: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Key -> (status, a phrase its reason holds)."""


def put(s3: Any, bucket: str, key: str, body: bytes) -> ObjectEvent:
    """PUT one object; the ObjectCreated:Put event S3 sends for it."""
    resp = s3.put_object(Bucket=bucket, Key=key, Body=body)
    return ObjectEvent(bucket, key, "ObjectCreated:Put", datetime.now(UTC), len(body),
                       resp["ETag"].strip('"'), resp.get("VersionId"))


def notified(events: Sequence[ObjectEvent]) -> list[ObjectEvent]:
    """The events as the poller reads them from the S3 notifications S3 sends for them (one message
    each, the key URL-encoded as S3 encodes it: `+` is `%2B`, `=` is `%3D`)."""
    return [e for i, event in enumerate(events) for e in parse(json.dumps(_notification(event, i))).events]


def _notification(e: ObjectEvent, sequence: int) -> dict[str, Any]:
    obj = {"key": quote_plus(e.key, safe="/"), "sequencer": f"{sequence:016X}", "size": e.size,
           "eTag": e.etag, "versionId": e.version_id}
    return {"Records": [{"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": "eu-west-1",
                         "eventTime": e.event_time.isoformat().replace("+00:00", "Z"),
                         "eventName": e.event_name,
                         "s3": {"s3SchemaVersion": "1.0", "bucket": {"name": e.bucket},
                                "object": {k: v for k, v in obj.items() if v is not None}}}]}


def json_lines(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()
