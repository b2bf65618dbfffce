"""The poller fed every hostile body (tests/data/events/hostile/, JSON nested 100k deep, bodies that
are not JSON) beside good messages: it keeps running, commits every good event once and deletes
its message, and every bad one is poison, with the queue's redrive or moved to the DLQ."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from lakeinlet.sources import batch as batch_module
from lakeinlet.sources.batch import OpenBatch
from lakeinlet.sources.envelopes import EventFilter
from lakeinlet.sources.memory import InMemoryQueue
from lakeinlet.sources.poller import Poller
from lakeinlet.sources.ports import Message
from tests.fakes import EVENTS, MemoryChangelog, s3_body, settings

pytestmark = pytest.mark.unit

HOSTILE = [p.read_text(encoding="utf-8") for p in sorted((EVENTS / "hostile").glob("*.json"))] + [
    "[" * 100_000 + "]" * 100_000, (EVENTS / "malformed.json").read_text(), "\ud800", ""]


def drained(queue: InMemoryQueue) -> list[Message]:
    got: list[Message] = []
    while batch := queue.receive(10, 0, 30):
        got += batch
    return got


def fill(queue: InMemoryQueue) -> tuple[list[str], list[str]]:
    """Good and hostile messages interleaved, so that every batch holds both; their keys/bodies."""
    good = [f"good/{i:02d}.json" for i in range(len(HOSTILE))]
    for key, bad in zip(good, HOSTILE, strict=True):
        queue.send_batch([s3_body(key), bad])
    return good, HOSTILE


@pytest.mark.parametrize("mode", ["redrive", "dlq"])
def test_hostile_bodies_cost_only_themselves(mode: str) -> None:
    dlq = InMemoryQueue(name="dlq")
    queue = InMemoryQueue(max_receive_count=5, dlq=dlq)
    good, bad = fill(queue)
    changelog = MemoryChangelog()
    summary = Poller(queue=queue, changelog=changelog, settings=settings(poison=mode, batch_size=10),
                     dlq=dlq).run()
    committed = Counter(r.event.key for r in changelog.rows)
    assert committed == Counter(good), f"expected each good event committed once, found {committed}"
    assert summary.poison == len(bad) and summary.acked == len(good), summary
    depths = queue.depths()
    if mode == "dlq":
        assert (depths.visible, depths.in_flight) == (0, 0), depths
        assert Counter(m.body for m in drained(dlq)) == Counter(bad), "expected every bad body in the DLQ"
    else:  # good ones deleted; bad ones left in flight for SQS's redrive after their timeout
        assert (depths.visible, depths.in_flight) == (0, len(bad)), depths


def test_a_parse_failure_nobody_foresaw_is_poison_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(body: str, message_id: str) -> None:
        raise RuntimeError("a gap in parse")

    monkeypatch.setattr(batch_module, "parse", broken)
    batch = OpenBatch("pb", EventFilter())
    poison = batch.add(Message("m9", "h", "{}"), datetime.now(UTC), 0.0)
    assert poison is not None and poison.error.startswith(
        "message m9: unexpected RuntimeError reading the body: 'a gap in parse'"), poison
    assert (batch.poison, batch.ack) == ([poison], []), batch
