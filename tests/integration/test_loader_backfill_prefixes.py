"""`backfill` with several --prefix flags counts every prefix's objects (not the last one's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.incremental.job import main
from tests.conftest import unique

pytestmark = pytest.mark.integration


def test_backfill_counts_all_prefixes(aws: AwsSection, tmp_path: Path, capsys: Any) -> None:
    s3, bucket = client("s3", aws), unique("land")
    s3.create_bucket(Bucket=bucket)
    for key in ("a/1.json", "a/2.json", "b/1.json", "c/ignored.json"):
        s3.put_object(Bucket=bucket, Key=key, Body=b'{"x": 1}\n')
    flags = ["--bucket", bucket, "--prefix", "a/", "--prefix", "b/", "--changelog", str(tmp_path / "cl"),
             "--table", str(tmp_path / "t"), "--endpoint-url", aws.endpoint_url or ""]
    assert main(["backfill", "--dry-run", *flags]) == 0
    assert "dry run: nothing changed (3 synthetic events would be appended)" in capsys.readouterr().out
    assert main(["backfill", *flags]) == 0
    assert "appended 3 synthetic events to the changelog" in capsys.readouterr().out
    rows = DeltaChangelog(str(tmp_path / "cl")).read_versions(after=-1).column("key").to_pylist()
    assert sorted(rows) == ["a/1.json", "a/2.json", "b/1.json"]


def test_backfill_never_appends_the_lakes_own_files_and_lists_each_bucket(aws: AwsSection,
                                                                           capsys: Any) -> None:
    """The lake in the landing bucket: a second backfill found the changelog's own Parquet and
    `_delta_log` files (written by the first) and appended them as data."""
    s3, land, land2 = client("s3", aws), unique("land"), unique("land")
    for bucket in (land, land2):
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="in/a.json", Body=b'{"x": 1}\n')
    flags = ["--bucket", f"{land},{land2}", "--changelog", f"s3://{land}/lake/changelog",
             "--table", f"s3://{land}/lake/orders", "--endpoint-url", aws.endpoint_url or ""]
    assert main(["backfill", *flags]) == 0
    assert "appended 2 synthetic events" in capsys.readouterr().out
    assert any(k.startswith("lake/changelog/_delta_log/") for k in keys(s3, land))
    assert main(["backfill", *flags]) == 0
    out = capsys.readouterr().out
    assert "appended 0 synthetic events" in out and "under lakeinlet's own tables left out" in out, out
    rows = DeltaChangelog(f"s3://{land}/lake/changelog", aws).read_versions(after=-1).to_pylist()
    assert sorted((r["bucket"], r["key"]) for r in rows) == sorted([(land, "in/a.json"),
                                                                    (land2, "in/a.json")])


def test_backfill_without_a_bucket_is_one_line_and_exit_2(tmp_path: Path, capsys: Any) -> None:
    assert main(["backfill", "--changelog", str(tmp_path / "cl"), "--table", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == ("error: backfill: give --bucket BUCKET, the bucket to list "
                                            "(repeatable); the same --bucket lets `run` load what the "
                                            "backfill appends") and "Traceback" not in err


def keys(s3: Any, bucket: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
