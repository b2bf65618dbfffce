"""Fakes shared by the poll-loop tests: S3 bodies from the fixture, an in-memory changelog that
journals its commits, a queue that journals its deletes, and the tests' poller settings."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote_plus

from lakeinlet.errors import TransientError
from lakeinlet.events import ReceivedEvent
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import PollerSettings
from lakeinlet.sources.ports import EntryFailure

EVENTS = Path(__file__).parent.parent / "data" / "events"
TEMPLATE = json.loads((EVENTS / "s3_put.json").read_text())


def s3_body(key: str, bucket: str = "landing-bucket") -> str:
    """The s3_put.json fixture with another key (quote_plus-encoded, as S3 sends it) and bucket."""
    doc = json.loads(json.dumps(TEMPLATE))
    doc["Records"][0]["s3"]["object"]["key"] = quote_plus(key, safe="/")
    doc["Records"][0]["s3"]["bucket"]["name"] = bucket
    doc["Records"][0]["s3"]["object"]["eTag"] = f"etag-{key}"
    doc["Records"][0]["s3"]["object"].pop("versionId")
    doc["Records"][0]["s3"]["object"].pop("sequencer")
    return json.dumps(doc)


class MemoryChangelog:
    """An in-memory changelog that records the order of operations in a shared journal."""

    def __init__(self, journal: list[tuple[str, object]] | None = None, fail: int = 0) -> None:
        self.commits: list[tuple[list[ReceivedEvent], dict[str, str]]] = []
        self.journal = journal if journal is not None else []
        self.fail = fail

    def append(self, rows: list[ReceivedEvent], metadata: dict[str, str]) -> int:
        if self.fail:
            self.fail -= 1
            raise TransientError("changelog commit failed (injected)")
        self.commits.append((list(rows), metadata))
        self.journal.append(("commit", {r.message_id for r in rows}))
        return len(self.commits) - 1

    @property
    def rows(self) -> list[ReceivedEvent]:
        return [r for rows, _ in self.commits for r in rows]


class JournalQueue(InMemoryQueue):
    """The in-memory queue, journaling deletes by message id (handles start with the id)."""

    def __init__(self, journal: list[tuple[str, object]], **kw: object) -> None:
        super().__init__(**kw)
        self.journal = journal

    def delete(self, receipt_handles: Sequence[str]) -> list[EntryFailure]:
        self.journal.append(("delete", {h.split(".")[0] for h in receipt_handles}))
        return super().delete(receipt_handles)


def settings(**kw: object) -> PollerSettings:
    base: dict[str, object] = {"wait_seconds": 0, "visibility_timeout": 30, "receivers": 2,
                               "batch_size": 10, "batch_seconds": 5.0, "until_empty": True}
    return PollerSettings(**(base | kw))
