"""The campaign's workload: what is uploaded, and the manifest the checker trusts (uploads go
straight to the emulator, never through the fault proxy, whose applied-but-failed answers would
leave the truth uncertain)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus

from lakeinlet.dev.samples import encode, make_rows

NOTIFIED_PREFIX = "in/"
QUIET_PREFIX = "quiet/"
EXTENSIONS = {"json": "jsonl", "csv": "csv", "parquet": "parquet"}
MAX_VERSIONS = 10  # row ids are object * MAX_VERSIONS + version


@dataclass(frozen=True)
class UploadedVersion:
    """One PUT that the emulator acknowledged: the object version and the rows it holds."""

    key: str
    object_no: int
    version: int
    """0 for the key's first upload, then 1, 2, ... per overwrite."""
    etag: str
    size: int
    order_ids: tuple[int, ...]
    uploaded_at: float
    """Unix time right after the PUT returned."""
    notified: bool
    """Under the notified prefix; False: only a backfill brings it in."""


@dataclass
class Manifest:
    """Every uploaded version and every crafted notification, in upload order (thread-safe)."""

    versions: list[UploadedVersion] = field(default_factory=list)
    crafted: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, version: UploadedVersion) -> None:
        with self._lock:
            self.versions.append(version)

    def count_crafted(self, kind: str) -> None:
        with self._lock:
            self.crafted[kind] += 1

    def snapshot(self) -> list[UploadedVersion]:
        with self._lock:
            return list(self.versions)

    def history(self, key: str) -> list[UploadedVersion]:
        """The versions of `key`, oldest first."""
        return [v for v in self.snapshot() if v.key == key]


@dataclass(frozen=True)
class WorkloadSettings:
    """Shape and pace of the workload (shares are chances per step)."""

    source_format: str = "parquet"
    pace_seconds: float = 0.5
    rows_per_object: int = 3
    overwrite_share: float = 0.08
    duplicate_share: float = 0.05
    reorder_share: float = 0.04
    quiet_share: float = 0.04
    odd_key_share: float = 0.1
    """Keys with a space, a plus and a non-ASCII letter (URL-encoded in the notification)."""


def s3_event(bucket: str, region: str, v: UploadedVersion) -> str:
    """An S3 `ObjectCreated:Put` notification for version `v`, in the shape moto sends."""
    when = datetime.fromtimestamp(v.uploaded_at, UTC).isoformat(timespec="milliseconds")
    record = {"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": region,
              "eventTime": when.replace("+00:00", "Z"), "eventName": "ObjectCreated:Put",
              "s3": {"s3SchemaVersion": "1.0", "configurationId": "lakeinlet-chaos",
                     "bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
                     "object": {"key": quote_plus(v.key), "size": v.size, "eTag": v.etag}}}
    return json.dumps({"Records": [record]})


class Workload:
    """Uploads at a steady pace on its own thread until `stop`; records into `manifest`.

    Most objects have unique keys; a few are overwritten soon after their upload (so the overwrite
    often lands between the event and the load), a few live under a prefix without notifications
    (only a backfill brings them in), and crafted S3 events are sent straight to the queue: a
    duplicate of a current version's event, or an older version's event after the newer one's
    (moto sends no sequencer or version id, so the etag is what tells versions apart).

    Args:
        s3, sqs: boto3 clients talking to the emulator directly.
        rng: the run's seeded generator (only this thread draws from it).
    """

    def __init__(self, s3: Any, sqs: Any, bucket: str, queue_url: str, region: str,
                 settings: WorkloadSettings, rng: random.Random) -> None:
        self.s3, self.sqs, self.bucket, self.queue_url, self.region = s3, sqs, bucket, queue_url, region
        self.settings, self.rng = settings, rng
        self.manifest = Manifest()
        self.errors: list[str] = []
        self._objects = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chaos-workload", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.pace_seconds):
            try:
                self.step()
            except Exception as exc:  # the emulator is direct: report, never kill the run
                self.errors.append(repr(exc))

    def step(self) -> None:
        """One action: an overwrite, a crafted duplicate or reordered event, or a new object."""
        s, roll = self.settings, self.rng.random()
        if roll < s.overwrite_share and self._overwrite():
            return
        roll -= s.overwrite_share
        if roll < s.duplicate_share and self._duplicate():
            return
        roll -= s.duplicate_share
        if roll < s.reorder_share and self._reorder():
            return
        self._new(quiet=self.rng.random() < s.quiet_share)

    def _new(self, quiet: bool) -> UploadedVersion:
        self._objects += 1
        n, ext = self._objects, EXTENSIONS[self.settings.source_format]
        name = f"p {n:05d}+é" if self.rng.random() < self.settings.odd_key_share else f"part-{n:05d}"
        prefix = QUIET_PREFIX if quiet else NOTIFIED_PREFIX
        return self._put(f"{prefix}{name}.{ext}", n, 0)

    def _put(self, key: str, obj_no: int, version: int) -> UploadedVersion:
        rows = make_rows(obj_no * MAX_VERSIONS + version, self.settings.rows_per_object)
        body = encode(rows, self.settings.source_format)
        resp = self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        v = UploadedVersion(key, obj_no, version, resp["ETag"].strip('"'), len(body),
                            tuple(r["order_id"] for r in rows), time.time(),
                            key.startswith(NOTIFIED_PREFIX))
        self.manifest.add(v)
        return v

    def _overwrite(self) -> bool:
        """A new version of one of the last few objects (often before its first one is loaded)."""
        recent = self.manifest.snapshot()[-8:]
        candidates = [v for v in recent if self._latest(v.key).version + 1 < MAX_VERSIONS]
        if not candidates:
            return False
        latest = self._latest(self.rng.choice(candidates).key)
        self._put(latest.key, latest.object_no, latest.version + 1)
        return True

    def _latest(self, key: str) -> UploadedVersion:
        return self.manifest.history(key)[-1]

    def _duplicate(self) -> bool:
        """The current version's event once more (S3 delivers at least once)."""
        notified = [v for v in self.manifest.snapshot() if v.notified]
        if not notified:
            return False
        self._send(self._latest(self.rng.choice(notified[-50:]).key), "duplicate")
        return True

    def _reorder(self) -> bool:
        """An older version's event after the newer version's (out-of-order delivery)."""
        old = [v for v in self.manifest.snapshot() if v.notified and v.version < self._latest(v.key).version]
        if not old:
            return False
        self._send(self.rng.choice(old[-20:]), "reordered")
        return True

    def _send(self, v: UploadedVersion, kind: str) -> None:
        self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=s3_event(self.bucket, self.region, v))
        self.manifest.count_crafted(kind)
