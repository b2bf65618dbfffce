"""The lake in the landing bucket under a notification of the whole bucket (the Terraform module's
defaults before issue 35), with `--after-load delete`: the poller (given the lake, as Terraform's
poll_environment gives it) writes no row for lakeinlet's own files, the loader loads only the
uploads, and cleanup deletes the uploads and nothing of the lake."""

from __future__ import annotations

from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import Stack
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.job import main as load
from lakeinlet.sources.job import main as poll
from tests.integration.poller_helpers import poll_args, rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _keys(s3: Any, bucket: str, prefix: str = "") -> set[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return {o["Key"] for page in pages for o in page.get("Contents", [])}


def test_a_lake_in_its_own_landing_bucket_never_ingests_or_deletes_itself(
        spark: Any, stack: Stack, aws: AwsSection, capsys: Any) -> None:
    s3 = client("s3", aws)
    files = make_files("json", 3, 2)
    for f in files:
        s3.put_object(Bucket=stack.bucket, Key=f.key, Body=f.body)
    changelog, table = f"s3://{stack.bucket}/lakeinlet/changelog", f"s3://{stack.bucket}/lakeinlet/orders"
    loader = ["--changelog", changelog, "--table", table, "--source-format", "json", "--schema", SCHEMA_DDL,
              "--bucket", stack.bucket, "--after-load", "delete", "--after-load-retention-hours", "0",
              "--endpoint-url", stack.endpoint, "--master", "local[2]"]
    lake = f"s3://{stack.bucket}/lakeinlet/"  # as Terraform's poll_environment gives the poller
    for _ in range(2):  # a poll and a load, then again: the first load's own files notify the queue too
        assert poll(poll_args(stack, changelog, "--lake", lake)) == 0
        assert load(["run", "--drain", *loader]) == 0
    capsys.readouterr()

    found = {(str(r["key"]), str(r["event_name"]).split(":")[0]) for r in rows(changelog, aws)}
    assert found == {(f.key, kind) for f in files for kind in ("ObjectCreated", "ObjectRemoved")}, \
        "the changelog holds rows of lakeinlet's own files"
    assert load(["status", *loader]) == 0  # the changelog and the table still read
    kept = _keys(s3, stack.bucket, "lakeinlet/")
    assert any(k.startswith("lakeinlet/changelog/_delta_log/") for k in kept)
    assert any(k.startswith("lakeinlet/orders/") and k.endswith(".parquet") for k in kept)
    assert _keys(s3, stack.bucket) == kept, "the uploads are cleaned up, and only they"
    ids = sorted(r["order_id"] for f in files for r in f.rows)
    loaded = spark.read.format("delta").load(f"s3a://{stack.bucket}/lakeinlet/orders")
    assert sorted(r.order_id for r in loaded.select("order_id").collect()) == ids
