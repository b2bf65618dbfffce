"""The campaign's workload with fake clients: what it records is what it uploaded and sent."""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest

from chaos.workload import NOTIFIED_PREFIX, QUIET_PREFIX, Workload, WorkloadSettings, s3_event
from lakeinlet.events import ObjectEvent
from lakeinlet.sources.envelopes import parse

pytestmark = pytest.mark.unit


class FakeS3:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put_object(self, Bucket: str, Key: str, Body: bytes) -> dict[str, Any]:
        self.objects[Key] = Body
        return {"ETag": f'"{hashlib.md5(Body).hexdigest()}"'}


class FakeSqs:
    def __init__(self) -> None:
        self.bodies: list[str] = []

    def send_message(self, QueueUrl: str, MessageBody: str) -> None:
        self.bodies.append(MessageBody)


def run_steps(steps: int, **shares: float) -> tuple[Workload, FakeS3, FakeSqs]:
    s3, sqs = FakeS3(), FakeSqs()
    w = Workload(s3, sqs, "land", "http://q", "us-east-1", WorkloadSettings(**shares), random.Random(3))
    for _ in range(steps):
        w.step()
    return w, s3, sqs


def test_every_put_is_recorded_with_its_etag_rows_and_prefix() -> None:
    w, s3, _ = run_steps(200, overwrite_share=0.2, quiet_share=0.2)
    versions = w.manifest.snapshot()
    newest = {v.key: v for v in versions}
    assert {k: hashlib.md5(b).hexdigest() for k, b in s3.objects.items()} == {
        k: v.etag for k, v in newest.items()}
    assert len({i for v in versions for i in v.order_ids}) == 3 * len(versions)  # row ids unique
    assert {v.notified for v in versions if v.key.startswith(QUIET_PREFIX)} == {False}
    assert {v.notified for v in versions if v.key.startswith(NOTIFIED_PREFIX)} == {True}
    for key in newest:
        assert [v.version for v in w.manifest.history(key)] == list(range(len(w.manifest.history(key))))
    assert any(v.version > 0 for v in versions)


def test_crafted_events_name_a_current_version_or_an_overwritten_one() -> None:
    w, _, sqs = run_steps(300, overwrite_share=0.3, duplicate_share=0.2, reorder_share=0.2)
    versions = w.manifest.snapshot()
    sent = [parse(body, f"m{i}").events[0] for i, body in enumerate(sqs.bodies)]
    assert len(sent) == sum(w.manifest.crafted.values()) > 0
    assert w.manifest.crafted["duplicate"] > 0 and w.manifest.crafted["reordered"] > 0
    by_ref = {(v.key, v.etag): v for v in versions}
    assert all((e.key, e.etag) in by_ref for e in sent)  # always a real version, never invented
    older = [e for e in sent if by_ref[e.key, e.etag].version < w.manifest.history(e.key)[-1].version]
    assert len(older) >= w.manifest.crafted["reordered"]


def test_a_crafted_event_decodes_like_s3s_own_and_has_its_event_id() -> None:
    w, _, _ = run_steps(1, odd_key_share=1.0)
    [v] = w.manifest.snapshot()
    assert " " in v.key and "+" in v.key and "é" in v.key
    body = s3_event("land", "us-east-1", v)
    assert "%C3%A9" in json.loads(body)["Records"][0]["s3"]["object"]["key"]  # sent URL-encoded
    [event] = parse(body, "m1").events
    moto_sent = ObjectEvent("land", v.key, "ObjectCreated:Put", event.event_time, v.size, v.etag)
    assert (event.key, event.etag, event.event_id) == (v.key, v.etag, moto_sent.event_id)
