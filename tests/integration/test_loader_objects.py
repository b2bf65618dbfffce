"""HEAD outcomes say what happened, from the error code: no such bucket, no such key, access denied."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.objects import S3ObjectStore
from lakeinlet.incremental.ports import ObjectHead, Unreadable
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
