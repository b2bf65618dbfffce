"""Staged copies of compressed objects under keys without their codec's suffix (moto in-process)."""

from __future__ import annotations

import bz2
import gzip
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from lakeinlet.incremental.model import FILTERED, MISSING, PlannedObject
from lakeinlet.incremental.ports import ObjectHead
from lakeinlet.incremental.read.staging import Staging, stage_suffix

pytestmark = pytest.mark.unit
GZ = gzip.compress(b'{"a": 1}\n', mtime=0)


def _head(body: bytes, etag: str | None = "e", encoding: str | None = None) -> ObjectHead:
    return ObjectHead(len(body), etag, datetime(2026, 1, 1, tzinfo=UTC), first=body[:64],
                      content_encoding=encoding)


@pytest.mark.parametrize(("key", "body", "suffix"), [
    ("firehose-1", GZ, ".gz"), ("a.json", bz2.compress(b"{}"), ".bz2"), ("a.json.gz", GZ, None),
    ("a.JSON.GZ", GZ, None), ("a.json", b'{"a": 1}', None), ("a.zip", b"PK\x03\x04", None),
])
def test_what_is_staged(key: str, body: bytes, suffix: str | None) -> None:
    assert stage_suffix(key, _head(body)) == suffix
    assert stage_suffix(key, None) is None


@pytest.fixture()
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        for b in ("land", "lake"):
            client.create_bucket(Bucket=b)
        yield client


def _obj(key: str) -> PlannedObject:
    return PlannedObject("land", key, "e", None, 1, "ev", datetime.now(UTC), 0)


class IfMatch:
    """moto ignores CopySourceIfMatch: answer as S3 does (412) when the source's ETag differs."""

    def __init__(self, s3: Any) -> None:
        self.s3 = s3

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s3, name)

    def copy_object(self, **kw: Any) -> Any:
        src = kw["CopySource"]
        if "CopySourceIfMatch" in kw and self.s3.head_object(Bucket=src["Bucket"], Key=src["Key"])[
                "ETag"] != kw["CopySourceIfMatch"]:
            raise ClientError({"Error": {"Code": "PreconditionFailed"}}, "CopyObject")
        return self.s3.copy_object(**kw)


def test_copies_pinned_to_the_headed_version_and_dropped(s3: Any) -> None:
    etags = {k: s3.put_object(Bucket="land", Key=k, Body=GZ)["ETag"] for k in ("fh/a b+1", "fh/changed")}
    staging = Staging(IfMatch(s3), "s3://lake/t_ledger_staging", "s3a")
    objs = [_obj("fh/a b+1"), _obj("fh/changed"), _obj("fh/gone"), _obj("plain.json.gz")]
    heads = {("land", "fh/a b+1"): _head(GZ, etags["fh/a b+1"]), ("land", "fh/changed"): _head(GZ, '"old"'),
             ("land", "fh/gone"): _head(GZ, '"x"'), ("land", "plain.json.gz"): _head(GZ)}
    copies = staging.copy(objs, heads, "b1")
    assert copies.uris == {("land", "fh/a b+1"): "s3a://lake/t_ledger_staging/b1/000000.gz"}
    assert s3.get_object(Bucket="lake", Key="t_ledger_staging/b1/000000.gz")["Body"].read() == GZ
    assert copies.heads[("land", "fh/a b+1")].last_modified != heads[("land", "fh/a b+1")].last_modified
    assert copies.failed[("land", "fh/changed")][0] == FILTERED
    assert "overwritten during the load" in copies.failed[("land", "fh/changed")][1]
    assert copies.failed[("land", "fh/gone")] == (
        MISSING, "object not found when copied to be read: s3://land/fh/gone")
    copies.unpersist()
    assert s3.list_objects_v2(Bucket="lake").get("KeyCount", 0) == 0


def test_nothing_to_stage_makes_no_request(s3: Any) -> None:
    class NoCalls:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"S3 called: {name}")

    heads = {("land", "a.json"): _head(b"{}")}
    copies = Staging(NoCalls(), "s3://lake/x", "s3a").copy([_obj("a.json")], heads, "b")
    assert copies.uris == {} and copies.failed == {}
    copies.unpersist()
