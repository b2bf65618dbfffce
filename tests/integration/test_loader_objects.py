"""HEAD outcomes say what happened, from the error code: no such bucket, no such key, access denied;
Parquet footers' row counts read with ranged GETs."""

from __future__ import annotations

import io
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from botocore.exceptions import ClientError, ResponseStreamingError

from lakeinlet.aws import AwsSection, client
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.incremental.ports import OVERWRITTEN, Footer, ObjectHead, Unreadable
from tests.conftest import unique

pytestmark = pytest.mark.integration


def obj(bucket: str, key: str) -> PlannedObject:
    return PlannedObject(bucket, key, "e", None, 3, f"id-{key}", datetime.now(UTC), 0)


def test_missing_bucket_missing_key_and_present_object(aws: AwsSection) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="here.json", Body=b"{}\n")
    objs = [obj(bucket, "here.json"), obj(bucket, "gone.json"), obj(unique("nobucket"), "a.json")]
    heads = S3ObjectStore(aws).head_many(objs)
    here = heads[(bucket, "here.json")]
    assert isinstance(here, ObjectHead) and here.size == 3 and here.last_modified is not None
    assert heads[(bucket, "gone.json")] == Unreadable("object not found (deleted before the load)")
    missing_bucket = heads[(objs[2].bucket, "a.json")]
    assert isinstance(missing_bucket, Unreadable) and missing_bucket.reason.startswith("no such bucket")


class DeniedS3:
    def head_object(self, **kw: Any) -> Any:
        raise ClientError({"Error": {"Code": "403", "Message": "Forbidden"}}, "HeadObject")


def test_access_denied_is_named_and_does_not_stop_the_run(aws: AwsSection) -> None:
    heads = S3ObjectStore(aws, s3=DeniedS3()).head_many([obj("b", "secret.json")])
    found = heads[("b", "secret.json")]
    assert isinstance(found, Unreadable) and found.reason.startswith("access denied (403)")


def _parquet(rows: int, row_group: int = 1000) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.table({"n": list(range(rows)), "s": [f"v{i}" * 3 for i in range(rows)]}), sink,
                   row_group_size=row_group)
    return sink.getvalue()


def test_footers_come_from_ranged_gets_of_the_tail(aws: AwsSection,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    for key, body in {"small.parquet": _parquet(10), "many.parquet": _parquet(5000, 10),
                      "text.parquet": b"not parquet at all\n" * 10, "gone.parquet": _parquet(3),
                      "moved.parquet": _parquet(4)}.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    objs = [obj(bucket, k) for k in ("small.parquet", "many.parquet", "text.parquet", "gone.parquet",
                                     "moved.parquet")]
    store = S3ObjectStore(aws)
    heads = {r: h for r, h in store.head_many(objs).items() if isinstance(h, ObjectHead)}
    s3.delete_object(Bucket=bucket, Key="gone.parquet")
    s3.put_object(Bucket=bucket, Key="moved.parquet", Body=_parquet(6))  # overwritten after its HEAD
    gets: list[str] = []
    real = store.s3.get_object
    monkeypatch.setattr(store.s3, "get_object", lambda **kw: gets.append(kw["Range"]) or real(**kw))
    monkeypatch.setattr("lakeinlet.incremental.objects.FOOTER_TAIL", 1024)  # many.parquet's is longer
    found = store.footers(objs, heads)
    rows = {k: (f.rows if isinstance(f, Footer) else f) for k, f in found.items()}
    assert rows == {(bucket, "small.parquet"): 10, (bucket, "many.parquet"): 5000,
                    (bucket, "moved.parquet"): OVERWRITTEN}  # text and gone: Spark reads them
    small, many = found[(bucket, "small.parquet")], found[(bucket, "many.parquet")]
    assert isinstance(small, Footer) and isinstance(many, Footer) and small.schema.equals(many.schema)
    assert sorted(gets).count("bytes=-1024") == 5 and len(gets) == 6  # one object needed a second GET


def test_footers_read_a_cut_body_again(aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="a.parquet", Body=_parquet(7))
    pauses: list[float] = []
    store = S3ObjectStore(aws, sleep=pauses.append)
    real, cuts = store.s3.get_object, [1]

    class CutBody:
        """The response's body breaks off once it is read (botocore's retries are over by then)."""

        def read(self, *args: Any) -> bytes:
            raise ResponseStreamingError(error="connection reset mid-body")

    def cut_once(**kw: Any) -> Any:
        answer = real(**kw)
        if cuts:
            cuts.pop()
            answer["Body"] = CutBody()
        return answer
    monkeypatch.setattr(store.s3, "get_object", cut_once)
    found = store.footers([obj(bucket, "a.parquet")], {})[(bucket, "a.parquet")]
    assert isinstance(found, Footer) and found.rows == 7
    assert len(pauses) == 1, "one cut body, read again once after a pause"


def test_parquet_checks_are_one_ranged_get_that_answers_as_head_does_and_keeps_the_footer(
        aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    bodies = {"a.parquet": _parquet(10), "many.parquet": _parquet(5000, 10),
              "text.parquet": b"not parquet\n", "empty.parquet": b""}
    for key, body in bodies.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    objs = [obj(bucket, k) for k in [*bodies, "gone.parquet"]] + [obj(unique("nobucket"), "x.parquet")]
    by_head = S3ObjectStore(aws).head_many(objs)
    store = S3ObjectStore(aws, parquet=True)
    calls: list[str] = []
    for name in ("get_object", "head_object"):
        real = getattr(store.s3, name)
        monkeypatch.setattr(store.s3, name, lambda _r=real, _n=name, **kw: calls.append(_n) or _r(**kw))
    monkeypatch.setattr("lakeinlet.incremental.objects.FOOTER_TAIL", 1024)
    by_tail = store.head_many(objs)
    assert by_tail == by_head  # same sizes, etags, mtimes and reasons as HEAD
    assert calls.count("head_object") == 0
    gets = len(calls)  # one per object, a second for many.parquet's long footer
    heads = {r: h for r, h in by_tail.items() if isinstance(h, ObjectHead)}
    found = store.footers([o for o in objs if (o.bucket, o.key) in heads], heads)
    assert {k[1]: f.rows for k, f in found.items() if isinstance(f, Footer)} == {
        "a.parquet": 10, "many.parquet": 5000}
    assert len(calls) - gets == 2  # footers read no object twice: only text and empty are tried


def test_json_checks_are_one_ranged_get_that_answers_as_head_does_and_keeps_the_first_bytes(
        aws: AwsSection, monkeypatch: pytest.MonkeyPatch) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    bodies = {"a.json": b'{"a":1}{"a":2}', "big.json": b'{"a":1}\n' * 20_000, "empty.json": b""}
    for key, body in bodies.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    objs = [obj(bucket, k) for k in [*bodies, "gone.json"]]
    by_head = S3ObjectStore(aws).head_many(objs)
    store = S3ObjectStore(aws, text=True)
    calls: list[str] = []
    for name in ("get_object", "head_object"):
        real = getattr(store.s3, name)
        monkeypatch.setattr(store.s3, name, lambda _r=real, _n=name, **kw: calls.append(_n) or _r(**kw))
    by_start = store.head_many(objs)
    firsts = {r[1]: h.first for r, h in by_start.items() if isinstance(h, ObjectHead)}
    assert firsts == {"a.json": bodies["a.json"], "big.json": bodies["big.json"][:64 * 1024],
                      "empty.json": None}  # an empty object's range is refused: HEAD answers
    assert {r: replace(h, first=None) if isinstance(h, ObjectHead) else h
            for r, h in by_start.items()} == by_head
    assert calls.count("get_object") == 4 and calls.count("head_object") <= 2


def test_content_encoding_is_kept_by_head_and_ranged_get(aws: AwsSection) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="fh-1", Body=b"\x1f\x8b\x08\x00", ContentEncoding="gzip")
    s3.put_object(Bucket=bucket, Key="plain.json", Body=b"{}")
    objs = [obj(bucket, "fh-1"), obj(bucket, "plain.json")]
    for store in (S3ObjectStore(aws), S3ObjectStore(aws, text=True)):
        found = {r[1]: getattr(h, "content_encoding", "?") for r, h in store.head_many(objs).items()}
        assert found == {"fh-1": "gzip", "plain.json": None}
