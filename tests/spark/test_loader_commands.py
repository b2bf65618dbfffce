"""The `lakeinlet-load` commands end to end: run (json logs), checkpoint show/reset, backfill."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any
from urllib.parse import unquote_plus

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import Stack, set_notifications
from lakeinlet.dev.samples import SCHEMA_DDL, make_files, upload
from lakeinlet.events import ObjectEvent
from lakeinlet.incremental.job import main
from lakeinlet.incremental.model import Position
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _flags(lake: str, endpoint: str, *extra: str) -> list[str]:
    return ["--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders",
            "--schema", SCHEMA_DDL, "--endpoint-url", endpoint, "--master", "local[2]", *extra]


def _ids(p: Any) -> Counter[int]:
    return Counter(target_rows(p).column("order_id").to_pylist())


def test_run_logs_one_json_line_per_batch(spark: Any, aws: AwsSection, capsys: Any) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 4, 2)
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body) for f in files])
    code = main(["run", "--drain", "--max-files", "2", "--log-format", "json",
                 *_flags(lake, aws.endpoint_url or "")])
    out = capsys.readouterr()
    assert code == 0
    batches = [json.loads(line) for line in out.err.splitlines() if '"event": "batch"' in line]
    assert [b["files"] for b in batches] == [2, 2]
    assert all(b["rows"] == 4 and b["target_version"] is not None for b in batches)
    assert "loaded 8 rows in 2 batches" in out.out
    assert main(["checkpoint", "show", "--json", *_flags(lake, aws.endpoint_url or "")]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["checkpoint"], shown["lag_versions"], shown["lag_events"]) == ("0", 0, 0)


def test_checkpoint_reset_back_and_forward(spark: Any, aws: AwsSection, capsys: Any) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 5, 2)
    p = parts(make_config(aws, lake), spark)
    for f in files[:3]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])
    p.loader().drain()
    flags = _flags(lake, aws.endpoint_url or "")
    before = p.target.table().version()  # type: ignore[union-attr]
    assert main(["checkpoint", "reset", "--to-version", "1", "--dry-run", *flags]) == 0
    out = capsys.readouterr().out
    assert "re-read version 1" in out and "re-read version 2" in out and "version 0" not in out
    assert p.target.table().version() == before  # type: ignore[union-attr]
    assert main(["checkpoint", "reset", "--to-version", "1", "--reason", "replay", *flags]) == 0
    assert p.target.checkpoint().position == Position(0)
    assert main(["checkpoint", "reset", "--to-version", "1", "--reason", "replay", *flags]) == 0
    assert "already applied" in capsys.readouterr().out
    assert p.target.table().version() == before + 1  # type: ignore[union-attr]
    assert any(c.meta.get("reason") == "replay" for c in p.target.commits())
    p.loader().drain()  # re-reads versions 1, 2: already loaded, so no duplicate rows
    assert _ids(p) == Counter(r["order_id"] for f in files[:3] for r in f.rows)
    for f in files[3:]:
        record(p.changelog, [put(s3, landing, f.key, f.body)])  # versions 3 and 4
    for bad in ("5", "-6"):  # past the head, below 0: refused, dry run or not, nothing changes
        for dry in (["--dry-run"], []):
            assert main(["checkpoint", "reset", "--to-version", bad, *dry, *flags]) == 2
            assert "the changelog holds versions 0..4" in capsys.readouterr().err
    assert p.target.checkpoint().position == Position(2)
    assert main(["checkpoint", "reset", "--to-latest", "--dry-run", *flags]) == 0
    out = capsys.readouterr().out
    assert "SKIP version 3" in out and "SKIP version 4" in out
    assert main(["checkpoint", "reset", "--to-latest", "--reason", "skip", *flags]) == 0
    p.loader().drain()
    assert _ids(p) == Counter(r["order_id"] for f in files[:3] for r in f.rows)


def _notified(aws: AwsSection, stack: Stack) -> list[ObjectEvent]:
    """A tiny parser of the real S3 → SQS notifications moto delivered (created events only)."""
    sqs, events = client("sqs", aws), []
    while msgs := sqs.receive_message(QueueUrl=stack.queue_url, MaxNumberOfMessages=10,
                                      WaitTimeSeconds=1).get("Messages", []):
        for m in msgs:
            for r in json.loads(m["Body"]).get("Records", []):
                o = r["s3"]["object"]
                events.append(ObjectEvent(r["s3"]["bucket"]["name"], unquote_plus(o["key"]),
                                          r["eventName"], datetime.fromisoformat(
                                              r["eventTime"].replace("Z", "+00:00")),
                                          o.get("size"), o.get("eTag")))
            sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=m["ReceiptHandle"])
    return events


def test_backfill_finds_objects_notifications_missed(spark: Any, aws: AwsSection, stack: Stack,
                                                      capsys: Any) -> None:
    _, lake, s3 = new_lake(aws)
    files = make_files("parquet", 6, 2)
    upload(s3, stack.bucket, files[:3])
    set_notifications(stack, enabled=False)
    upload(s3, stack.bucket, files[3:])  # no events for these
    p = parts(make_config(aws, lake), spark)
    notified = _notified(aws, stack)
    assert sorted(e.key for e in notified) == sorted(f.key for f in files[:3])
    record(p.changelog, notified)
    flags = _flags(lake, aws.endpoint_url or "")
    assert main(["backfill", "--bucket", stack.bucket, "--dry-run", *flags]) == 0
    out = capsys.readouterr().out
    assert all(f.key in out for f in files[3:]) and not any(f.key in out for f in files[:3])
    assert f"3 objects, {sum(len(f.body) for f in files[3:])} bytes" in out
    head = p.changelog.head_version()
    assert p.changelog.head_version() == head
    assert main(["backfill", "--bucket", stack.bucket, *flags]) == 0
    assert main(["backfill", "--bucket", stack.bucket, *flags]) == 0  # nothing new the second time
    assert "0 objects" in capsys.readouterr().out.split("appended")[-2]
    assert p.changelog.head_version() == head + 1
    assert main(["run", "--drain", *flags]) == 0
    assert _ids(p) == Counter(r["order_id"] for f in files for r in f.rows)
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}
