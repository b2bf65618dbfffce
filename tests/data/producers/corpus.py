"""What a producer wrote and what a loader must make of it: the events S3 sent, in the changelog
commits a poller would have made, the data rows, the artefacts and the objects set aside."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from lakeinlet.events import ObjectEvent


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


def json_lines(rows: list[dict[str, Any]]) -> bytes:
    import json

    return "".join(json.dumps(r) + "\n" for r in rows).encode()
