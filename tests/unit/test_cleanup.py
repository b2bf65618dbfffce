"""Source cleanup after load (`--after-load`): archive and delete only what the ledger records
`loaded`, never a newer version, once each, and resumed after a crash at each step (moto's
in-process S3, the ledger and the cleanup log as local Delta tables)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.cleanup import IDENTITY_META, AfterLoad, Cleanup
from lakeinlet.incremental.cleanup_guard import Guard
from lakeinlet.incremental.cleanup_store import S3SourceCleaner
from lakeinlet.incremental.ledger import DeltaCleanupLog, DeltaLedger
from lakeinlet.incremental.model import (
    CORRUPT,
    FILTERED,
    LOADED,
    MISSING,
    REMOVED,
    SCHEMA_CONFLICT,
    TOO_LARGE,
    UNROUTED,
    Outcome,
    PlannedObject,
)

pytestmark = pytest.mark.unit

SRC, ARCHIVE = "landing", "vault"
LATER = timedelta(hours=25)
"""How far past its load a pass runs (beyond the default retention of 24 h)."""


class Crash(RuntimeError):
    """The process dies here (not an error the pass handles)."""


@pytest.fixture
def s3(in_process_aws: AwsSection) -> Any:
    s3 = client("s3", in_process_aws)
    for bucket in (SRC, ARCHIVE):
        s3.create_bucket(Bucket=bucket)
    return s3


@pytest.fixture
def ledger(tmp_path: Path) -> DeltaLedger:
    return DeltaLedger(str(tmp_path / "orders_ledger"), AwsSection(), "app")


@pytest.fixture
def record(tmp_path: Path) -> DeltaCleanupLog:
    return DeltaCleanupLog(str(tmp_path / "orders_ledger_cleanup"), AwsSection(), "app")


def put(s3: Any, key: str, body: bytes = b"", bucket: str = SRC) -> dict[str, Any]:
    return s3.put_object(Bucket=bucket, Key=key, Body=body or key.encode())  # type: ignore[no-any-return]


def load(ledger: DeltaLedger, version: int, *objs: tuple[str, dict[str, Any], str], bad: int = 0) -> None:
    """A committed batch's ledger rows: (key, the PUT's response, status) each."""
    planned = [(PlannedObject(SRC, key, resp.get("ETag"), resp.get("VersionId"), 1, f"e-{key}-{version}",
                              datetime.now(UTC), version), status) for key, resp, status in objs]
    outcomes = [Outcome(obj, status, bad_records=bad) for obj, status in planned]
    ledger.append(outcomes, version, f"b{version}")


def cleanup(s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog, spec: str = f"archive:s3://{ARCHIVE}/old",
            store: Any = None, **kw: Any) -> Cleanup:
    kw.setdefault("clock", lambda: datetime.now(UTC) + LATER)
    return Cleanup(AfterLoad.parse(spec), ledger, record, store or S3SourceCleaner(AwsSection(), s3=s3),
                   kw.pop("retention_hours", 24.0), kw.pop("max_objects", 1000), **kw)


def keys(s3: Any, bucket: str) -> set[str]:
    return {o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


def body(s3: Any, bucket: str, key: str, **kw: Any) -> bytes:
    return s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()  # type: ignore[no-any-return]


def recorded(record: DeltaCleanupLog) -> Counter[tuple[str, str]]:
    return Counter((r["key"], r["status"]) for r in record.read().to_pylist())


def test_archive_copies_the_version_loaded_under_prefix_bucket_key_then_deletes_it(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    resp = s3.put_object(Bucket=SRC, Key="orders/2026/a.json", Body=b'{"id": 1}',
                         ContentType="application/json", Metadata={"team": "sales"})
    load(ledger, 0, ("orders/2026/a.json", resp, LOADED))
    report = cleanup(s3, ledger, record).run()
    assert report.done == {"archived": 1}
    assert keys(s3, SRC) == set()
    archived = s3.head_object(Bucket=ARCHIVE, Key="old/landing/orders/2026/a.json")
    assert body(s3, ARCHIVE, "old/landing/orders/2026/a.json") == b'{"id": 1}'
    assert archived["Metadata"] == {"team": "sales", IDENTITY_META: resp["ETag"].strip('"')}
    assert archived["ContentType"] == "application/json"
    [row] = record.read().to_pylist()
    assert (row["status"], row["destination"]) == ("archived", f"s3://{ARCHIVE}/old/landing/orders/2026/a.json")


def test_an_object_over_the_single_copy_limit_is_archived_in_parts_with_its_identity(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog, monkeypatch: pytest.MonkeyPatch) -> None:
    from boto3.s3.transfer import TransferConfig

    from lakeinlet.incremental import cleanup_store

    mib = 1024 * 1024  # S3's 5 GiB CopyObject limit, scaled down to S3's smallest part
    parts = TransferConfig(multipart_threshold=5 * mib, multipart_chunksize=5 * mib)
    monkeypatch.setattr(cleanup_store, "COPY", parts)
    big = bytes(range(256)) * (6 * mib // 256)
    resp = s3.put_object(Bucket=SRC, Key="big.bin", Body=big, ContentType="application/octet-stream")
    load(ledger, 0, ("big.bin", resp, LOADED))
    assert cleanup(s3, ledger, record).run().done == {"archived": 1}
    archived = s3.head_object(Bucket=ARCHIVE, Key="old/landing/big.bin")
    assert archived["ETag"].endswith('-2"') and archived["Metadata"][IDENTITY_META] == resp["ETag"].strip('"')
    assert body(s3, ARCHIVE, "old/landing/big.bin") == big and keys(s3, SRC) == set()


def test_delete_deletes_only_what_the_ledger_records_loaded(s3: Any, ledger: DeltaLedger,
                                                            record: DeltaCleanupLog) -> None:
    statuses = [FILTERED, MISSING, CORRUPT, TOO_LARGE, SCHEMA_CONFLICT, UNROUTED]
    load(ledger, 0, ("a", put(s3, "a"), LOADED), *((s, put(s3, s), s) for s in statuses))
    load(ledger, 1, ("bad", put(s3, "bad"), LOADED), bad=2)  # malformed records in the quarantine
    load(ledger, 2, ("gone", put(s3, "gone"), LOADED))
    load(ledger, 3, ("gone", put(s3, "gone"), REMOVED))  # its rows removed after the load
    report = cleanup(s3, ledger, record, "delete").run()
    assert keys(s3, SRC) == {*statuses, "bad", "gone"}
    assert recorded(record) == {("a", "deleted"): 1}
    assert sum(report.kept.values()) == 2 and report.done == {"deleted": 1}


def test_an_object_overwritten_since_its_load_is_kept_until_its_new_version_is_loaded(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a", b"v1"), LOADED))
    newer = put(s3, "a", b"v2")  # not loaded yet
    report = cleanup(s3, ledger, record).run()
    assert body(s3, SRC, "a") == b"v2" and keys(s3, ARCHIVE) == set()
    assert report.skipped == {"overwritten since the load": 1}
    load(ledger, 1, ("a", newer, LOADED))
    assert cleanup(s3, ledger, record).run().done == {"archived": 1}
    assert keys(s3, SRC) == set() and body(s3, ARCHIVE, "old/landing/a") == b"v2"
    assert recorded(record) == {("a", "skipped"): 1, ("a", "archived"): 1}


def test_versioned_bucket_the_exact_version_loaded_is_archived_even_if_overwritten_meanwhile(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    s3.put_bucket_versioning(Bucket=SRC, VersioningConfiguration={"Status": "Enabled"})
    v1 = put(s3, "a", b"v1")
    load(ledger, 0, ("a", v1, LOADED), ("b", put(s3, "b", b"b1"), LOADED))
    put(s3, "b", b"b2")  # a newer version of b, not loaded yet: b is left alone
    store = S3SourceCleaner(AwsSection(), s3=s3)
    real_head = store.head

    def overwritten_after_the_check(bucket: str, key: str) -> Any:
        found = real_head(bucket, key)
        if (bucket, key) == (SRC, "a"):
            put(s3, "a", b"v2")  # a new version lands between the check and the copy
        return found

    store.head = overwritten_after_the_check  # type: ignore[method-assign]
    report = cleanup(s3, ledger, record, store=store).run()
    assert body(s3, ARCHIVE, "old/landing/a") == b"v1"
    assert body(s3, SRC, "a") == b"v2"  # deleted by version id: the newer version is left alone
    assert (report.done, report.skipped) == ({"archived": 1}, {"overwritten since the load": 1})
    assert versions(s3, "a") == [(False, b"v2")]  # the version loaded is gone, no delete marker
    assert body(s3, SRC, "b") == b"b2" and keys(s3, ARCHIVE) == {"old/landing/a"}


def versions(s3: Any, key: str) -> list[tuple[bool, bytes]]:
    """(delete marker?, body) of each version of SRC/key, newest first."""
    found = s3.list_object_versions(Bucket=SRC, Prefix=key)
    out = [(True, b"") for _ in found.get("DeleteMarkers", [])]
    return out + [(False, body(s3, SRC, key, VersionId=v["VersionId"])) for v in found.get("Versions", [])]


@pytest.mark.parametrize(("spec", "step"), [
    (f"archive:s3://{ARCHIVE}/old", "copy"), (f"archive:s3://{ARCHIVE}/old", "delete"),
    (f"archive:s3://{ARCHIVE}/old", "record"), ("delete", "delete"), ("delete", "record")])
def test_a_crash_at_each_step_then_a_rerun_cleans_every_loaded_object_once(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog, spec: str, step: str) -> None:
    load(ledger, 0, *((k, put(s3, k), LOADED) for k in ("a", "b", "c")), ("f", put(s3, "f"), FILTERED))
    load(ledger, 1, ("d", put(s3, "d"), LOADED), ("m", put(s3, "m"), MISSING))
    copies: Counter[str] = Counter()
    store = S3SourceCleaner(AwsSection(), s3=s3)
    real_copy, real_delete = store.copy, store.delete

    def copy(obj: Any, head: Any, bucket: str, key: str) -> None:
        copies[key] += 1
        real_copy(obj, head, bucket, key)
        if step == "copy":
            raise Crash("after the copy")

    def delete(bucket: str, key: str, etag: str, version_id: str | None = None) -> str:
        done = real_delete(bucket, key, etag, version_id)
        if step == "delete":
            raise Crash("after the delete")
        return done

    store.copy, store.delete = copy, delete  # type: ignore[method-assign]
    dying = DeltaCleanupLog(record.uri, AwsSection(), "app")

    def append(*args: Any) -> None:
        raise Crash("before the record")

    if step == "record":
        dying.append = append  # type: ignore[method-assign]
    with pytest.raises(Crash):
        cleanup(s3, ledger, dying, spec, store=store).run()
    store.copy, store.delete = real_copy, real_delete  # type: ignore[method-assign]
    counting = S3SourceCleaner(AwsSection(), s3=s3)
    counting.copy = copy  # type: ignore[method-assign]
    step = "none"
    cleanup(s3, ledger, record, spec, store=counting).run()
    status = "archived" if spec.startswith("archive") else "deleted"
    assert keys(s3, SRC) == {"f", "m"}  # only what was not loaded is left
    assert recorded(record) == {(k, status): 1 for k in "abcd"}
    if status == "archived":
        assert keys(s3, ARCHIVE) == {f"old/landing/{k}" for k in "abcd"}
        assert copies == {f"old/landing/{k}": 1 for k in "abcd"}  # nothing archived twice
    assert cleanup(s3, ledger, record, spec).run().done == {}  # all settled: nothing more


def test_only_objects_loaded_longer_ago_than_the_retention(s3: Any, ledger: DeltaLedger,
                                                          record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    now = datetime.now(UTC)
    report = cleanup(s3, ledger, record, "delete", clock=lambda: now + timedelta(hours=23)).run()
    assert (report.waiting, report.done, keys(s3, SRC)) == (1, {}, {"a"})
    assert record.floor() == -1  # the waiting object holds the floor back
    assert cleanup(s3, ledger, record, "delete", clock=lambda: now + LATER).run().done == {"deleted": 1}
    assert record.floor() == 0


def test_a_pass_is_bounded_and_the_next_one_goes_on(s3: Any, ledger: DeltaLedger,
                                                    record: DeltaCleanupLog) -> None:
    for v, k in enumerate("abc"):
        load(ledger, v, (k, put(s3, k), LOADED))
    first = cleanup(s3, ledger, record, "delete", max_objects=2).run()
    assert (first.done, first.left, keys(s3, SRC), record.floor()) == ({"deleted": 2}, 1, {"c"}, 1)
    assert cleanup(s3, ledger, record, "delete", max_objects=2).run().done == {"deleted": 1}
    assert record.floor() == 2 and recorded(record) == {(k, "deleted"): 1 for k in "abc"}


def test_the_backlog_counts_what_the_next_pass_would_clean_without_asking_the_source(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    for v, k in enumerate("abc"):
        load(ledger, v, (k, put(s3, k), LOADED), (f"{k}.skip", put(s3, f"{k}.skip"), FILTERED))
    now = datetime.now(UTC)
    early = cleanup(s3, ledger, record, "delete", store=object(), clock=lambda: now + timedelta(hours=23))
    assert (early.backlog().left, early.backlog().waiting) == (0, 3)  # `object()`: no call reached it
    assert cleanup(s3, ledger, record, "delete", max_objects=2).run().done == {"deleted": 2}
    late = cleanup(s3, ledger, record, "delete", store=object())
    assert (late.backlog().left, late.backlog().waiting) == (1, 0)
    cleanup(s3, ledger, record, "delete").run()
    assert (late.backlog().left, late.backlog().waiting) == (0, 0)


def test_a_transient_failure_is_retried_by_the_next_pass_and_nothing_else_is_redone(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    load(ledger, 1, ("b", put(s3, "b"), LOADED))
    store = S3SourceCleaner(AwsSection(), s3=s3)
    real_delete = store.delete

    def throttled(bucket: str, key: str, etag: str, version_id: str | None = None) -> str:
        if key == "a":
            raise TransientError("SlowDown")
        return real_delete(bucket, key, etag, version_id)

    store.delete = throttled  # type: ignore[method-assign]
    first = cleanup(s3, ledger, record, "delete", store=store).run()
    assert (first.failed, first.done, keys(s3, SRC), record.floor()) == (1, {"deleted": 1}, {"a"}, -1)
    assert cleanup(s3, ledger, record, "delete").run().done == {"deleted": 1}  # a only: b is recorded
    assert recorded(record) == {("a", "deleted"): 1, ("b", "deleted"): 1} and record.floor() == 1


def test_source_gone_is_recorded_with_or_without_its_archive(s3: Any, ledger: DeltaLedger,
                                                             record: DeltaCleanupLog) -> None:
    a, b = put(s3, "a"), put(s3, "b")
    load(ledger, 0, ("a", a, LOADED), ("b", b, LOADED))
    s3.copy_object(Bucket=ARCHIVE, Key="old/landing/a", CopySource={"Bucket": SRC, "Key": "a"},
                   MetadataDirective="REPLACE", Metadata={IDENTITY_META: a["ETag"].strip('"')})
    for k in "ab":
        s3.delete_object(Bucket=SRC, Key=k)
    report = cleanup(s3, ledger, record).run()
    assert report.done == {"archived": 1}
    assert report.skipped == {"the source was gone before its cleanup, with no archive of this version": 1}


def test_dry_run_changes_nothing(s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    report = cleanup(s3, ledger, record).run(dry_run=True)
    assert report.done == {"archived": 1} and "would be archived 1" in report.lines()[0]
    assert keys(s3, SRC) == {"a"} and keys(s3, ARCHIVE) == set() and record.read().num_rows == 0


def test_an_archive_this_loader_would_load_again_is_refused(s3: Any, ledger: DeltaLedger,
                                                           record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    with pytest.raises(TerminalError, match="would be loaded again"):
        cleanup(s3, ledger, record, f"archive:s3://{SRC}/archive", loads=lambda key: True).run()
    assert keys(s3, SRC) == {"a"} and record.read().num_rows == 0
    assert cleanup(s3, ledger, record, f"archive:s3://{SRC}/archive",
                   loads=lambda key: not key.startswith("archive/")).run().done == {"archived": 1}


def test_a_key_another_route_loads_too_is_kept_for_it(s3: Any, ledger: DeltaLedger,
                                                     record: DeltaCleanupLog) -> None:
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    report = cleanup(s3, ledger, record, "delete", shared=lambda key: "clicks").run()
    assert keys(s3, SRC) == {"a"} and report.skipped == {"route clicks loads this key too": 1}


def test_after_load_settings() -> None:
    from lakeinlet.config import resolve
    from lakeinlet.incremental.settings import LoaderConfig

    assert AfterLoad.parse("archive:s3://vault/a/b").destination("src", "k/1") == ("vault", "a/b/src/k/1")
    assert AfterLoad.parse("archive:s3://vault").destination("src", "k") == ("vault", "src/k")
    assert not AfterLoad.parse("off").enabled and AfterLoad.parse("delete").destination("s", "k") is None
    for bad in ("archive:vault/a", "archive", "move", "archive:s3:///x"):
        with pytest.raises(ValueError, match="expected off, delete or archive"):
            AfterLoad.parse(bad)
    env = {"LAKEINLET__TABLES__CHANGELOG": "c", "LAKEINLET__TABLES__TABLE": "t",
           "LAKEINLET__CLEANUP__AFTER_LOAD": "delete", "LAKEINLET__PLAN__ON_DELETE": "remove-rows"}
    with pytest.raises(ConfigError, match="remove the rows just loaded"):
        resolve(LoaderConfig, environ=env)
    fine = resolve(LoaderConfig, environ=env | {"LAKEINLET__PLAN__ON_DELETE": "append-only"})
    assert fine.cleanup.spec == AfterLoad("delete")


def test_the_cleanup_command_does_one_pass_and_prints_its_counts(
        s3: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lakeinlet.incremental.job import main

    ledger = DeltaLedger(str(tmp_path / "orders_ledger"), AwsSection(), "lakeinlet-loader")
    load(ledger, 0, ("a", put(s3, "a"), LOADED), ("b", put(s3, "b"), FILTERED))
    argv = ["cleanup", "--changelog", str(tmp_path / "changelog"), "--table", str(tmp_path / "orders"),
            "--after-load-retention-hours", "0"]
    assert main([*argv, "--after-load", "delete", "--dry-run"]) == 0
    assert "would be deleted 1" in capsys.readouterr().out and keys(s3, SRC) == {"a", "b"}
    assert main([*argv, "--after-load", "delete"]) == 0
    assert capsys.readouterr().out.startswith("archived 0, deleted 1, skipped 0")
    assert keys(s3, SRC) == {"b"}
    assert DeltaCleanupLog(str(tmp_path / "orders_ledger_cleanup"), AwsSection(), "x").read().num_rows == 1
    assert main(argv) == 2 and "--after-load is off" in capsys.readouterr().err


def test_run_cleans_up_after_each_drain_and_a_failed_pass_does_not_fail_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse
    import time
    from types import SimpleNamespace

    from lakeinlet.incremental.cleanup import CleanupReport
    from lakeinlet.incremental.commands import run as run_command
    from lakeinlet.incremental.console import Stop
    from lakeinlet.incremental.loader import Summary

    passes: list[str] = []

    class Passes:
        def run(self, dry_run: bool = False, stopped: Any = None) -> CleanupReport:
            passes.append("pass")
            if len(passes) == 1:
                raise TransientError("SlowDown")
            return CleanupReport()

    drains = iter([Summary(batches=1), Summary(batches=0)])
    loader = SimpleNamespace(drain=lambda **_: next(drains))
    monkeypatch.setattr(run_command, "build_cleanup", lambda parts: Passes())
    monkeypatch.setattr(time, "sleep", lambda s: None)
    from lakeinlet.incremental.settings import LoaderConfig

    stop = Stop()
    parts = SimpleNamespace(config=LoaderConfig(), loader=lambda: loader, register=lambda: None)
    real_pause = stop.pause

    def pause(seconds: float) -> None:
        if len(passes) == 2:
            stop.requested = True
        real_pause(seconds)

    stop.pause = pause  # type: ignore[method-assign]
    run_command.cmd_run(parts, argparse.Namespace(drain=False, continuous=True), stop)  # type: ignore[arg-type]
    assert passes == ["pass", "pass"] and "in 1 batches" in capsys.readouterr().out


def test_with_routes_a_key_two_routes_load_is_shared_and_remove_rows_is_refused(
        s3: Any, tmp_path: Path) -> None:
    from dataclasses import replace

    from lakeinlet.config import resolve
    from lakeinlet.incremental.routes import routes_of
    from lakeinlet.incremental.settings import LoaderConfig
    from lakeinlet.incremental.wiring import build, build_cleanup

    config = resolve(LoaderConfig, environ={"LAKEINLET__TABLES__CHANGELOG": str(tmp_path / "changelog"),
                                            "LAKEINLET__TABLES__TABLE": str(tmp_path / "t"),
                                            "LAKEINLET__CLEANUP__AFTER_LOAD": "delete"})

    def first_route(*defs: str) -> Any:
        return build(routes_of(replace(config, routes=replace(config.routes, route_def=defs)))[0].config)

    orders = f"orders: table={tmp_path}/orders; prefix=orders/,all/"
    clicks = f"clicks: table={tmp_path}/clicks; prefix=clicks/,all/; ignore_prefix=all/skip/"
    clean = build_cleanup(first_route(orders, clicks))
    assert clean is not None
    assert [clean.shared(k) for k in ("all/x", "all/skip/x", "orders/x")] == ["clicks", None, None]
    assert clean.loads("clicks/x") and not clean.loads("other/x")  # an archive there would be loaded again
    assert clean.loads_from("any-bucket")  # no --bucket: an archive in any bucket would be loaded again
    with pytest.raises(ConfigError, match="remove the rows just loaded"):
        build_cleanup(first_route(orders + "; on_delete=remove-rows"))


class Store:
    """The S3 client, counting PUTs; `ignores_if_match`: a store that deletes whatever If-Match says."""

    def __init__(self, s3: Any, ignores_if_match: bool = False, denies_versions: bool = False) -> None:
        self.s3, self.ignores, self.denies, self.puts = s3, ignores_if_match, denies_versions, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.s3, name)

    def put_object(self, **kw: Any) -> Any:
        self.puts += 1
        return self.s3.put_object(**kw)

    def delete_object(self, **kw: Any) -> Any:
        if self.ignores:
            kw.pop("IfMatch", None)
        if self.denies and "VersionId" in kw:  # a role without s3:DeleteObjectVersion
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "denied"}}, "DeleteObject")
        return self.s3.delete_object(**kw)


def test_a_store_that_ignores_conditional_deletes_is_refused_with_one_line_probed_once(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    """Cleanup's overwrite safety rests on If-Match: a store that ignores it deleted the newer
    version of an object overwritten after its check."""
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    ignoring = Store(s3, ignores_if_match=True)
    clean = cleanup(s3, ledger, record, "delete", store=S3SourceCleaner(AwsSection(), s3=ignoring))
    for _ in range(2):
        with pytest.raises(TerminalError) as refused:
            clean.run()
        assert str(refused.value).startswith("--after-load delete refused: the store ignores conditional "
                                             f"deletes (a DeleteObject of s3://{SRC}/_lakeinlet/probe-")
        assert "\n" not in str(refused.value)
    assert ignoring.puts == 1 and keys(s3, SRC) == {"a"} and record.read().num_rows == 0
    assert clean.run(dry_run=True).done == {"deleted": 1}  # a dry run deletes nothing: no probe


def test_the_probe_runs_once_leaves_nothing_behind_and_writes_under_the_cleanup_log_when_on_s3(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog) -> None:
    s3.create_bucket(Bucket="lake")
    s3.put_bucket_versioning(Bucket="lake", VersioningConfiguration={"Status": "Enabled"})
    counting = Store(s3)
    clean = cleanup(s3, ledger, record, "delete", store=S3SourceCleaner(AwsSection(), s3=counting),
                    guard=Guard(probe_at=("lake", "orders_ledger_cleanup/_probe/")))
    for v, k in enumerate("ab"):
        load(ledger, v, (k, put(s3, k), LOADED))
        assert clean.run().done == {"deleted": 1}
    assert counting.puts == 1 and keys(s3, SRC) == set()
    assert s3.list_object_versions(Bucket="lake").get("Versions", []) == []
    assert s3.list_object_versions(Bucket="lake").get("DeleteMarkers", []) == []


def test_a_probe_it_may_not_delete_by_version_leaves_a_few_bytes_and_the_cleanup_goes_on(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog, caplog: pytest.LogCaptureFixture) -> None:
    s3.create_bucket(Bucket="lake")
    s3.put_bucket_versioning(Bucket="lake", VersioningConfiguration={"Status": "Enabled"})
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    store = S3SourceCleaner(AwsSection(), s3=Store(s3, denies_versions=True))
    clean = cleanup(s3, ledger, record, "delete", store=store, guard=Guard(probe_at=("lake", "log/_probe/")))
    assert clean.run().done == {"deleted": 1}
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == ["probe left behind"]


def test_lakeinlets_own_tables_and_other_buckets_are_never_cleaned_up_whatever_the_ledger_says(
        s3: Any, tmp_path: Path, in_process_aws: AwsSection) -> None:
    from lakeinlet.incremental.settings import CleanupSection, LoaderConfig, PlanSection, TablesSection
    from lakeinlet.incremental.wiring import build, build_cleanup

    s3.create_bucket(Bucket="elsewhere")
    tables = TablesSection(changelog=str(tmp_path / "changelog"), table=str(tmp_path / "orders"))
    config = LoaderConfig(tables=tables, plan=PlanSection(buckets=(SRC,), lake=(f"s3://{SRC}/lake",)),
                          cleanup=CleanupSection(after_load="delete", after_load_retention_hours=0),
                          aws=in_process_aws)
    parts = build(config)
    lake_file, data = put(s3, "lake/orders/part-0.parquet"), put(s3, "in/a.json")
    elsewhere = put(s3, "in/b.json", bucket="elsewhere")
    load(parts.ledger, 0, ("lake/orders/part-0.parquet", lake_file, LOADED), ("in/a.json", data, LOADED))
    other = PlannedObject("elsewhere", "in/b.json", elsewhere["ETag"], None, 1, "e-b", datetime.now(UTC), 0)
    parts.ledger.append([Outcome(other, LOADED)], 1, "b1")
    clean = build_cleanup(parts)
    assert clean is not None
    report = clean.run()
    assert report.done == {"deleted": 1} and keys(s3, SRC) == {"lake/orders/part-0.parquet"}
    assert keys(s3, "elsewhere") == {"in/b.json"}
    reasons = {r["key"]: r["reason"] for r in DeltaCleanupLog(
        str(tmp_path / "orders_ledger_cleanup"), AwsSection(), "x").read().to_pylist()}
    assert reasons["lake/orders/part-0.parquet"] == (
        f"never cleaned up: lakeinlet's own table s3://{SRC}/lake/: never loaded nor cleaned up "
        "(lakeinlet writes there)")
    assert reasons["in/b.json"].startswith(f"never cleaned up: bucket not in --bucket ({SRC})")


def test_an_archive_in_another_bucket_the_loader_loads_from_is_refused(s3: Any, ledger: DeltaLedger,
                                                                       record: DeltaCleanupLog) -> None:
    """Issue 36: no --bucket and no key filter, archive in another bucket: the refusal did not fire."""
    load(ledger, 0, ("a", put(s3, "a"), LOADED))
    with pytest.raises(TerminalError, match=f"s3://{ARCHIVE}/old/{SRC}/a is a key this loader loads"):
        cleanup(s3, ledger, record, loads=lambda key: True, loads_from=lambda bucket: True).run()
    assert keys(s3, SRC) == {"a"} and record.read().num_rows == 0
    assert cleanup(s3, ledger, record, loads=lambda key: True,
                   loads_from=lambda bucket: bucket == SRC).run().done == {"archived": 1}


@pytest.mark.parametrize("parquet", [False, True], ids=["head", "tail-get"])
def test_archived_copies_are_never_new_objects_to_the_loader_nor_to_backfill(
        s3: Any, ledger: DeltaLedger, record: DeltaCleanupLog, parquet: bool) -> None:
    """Issue 36: backfilling an archive bucket appended the archived copies (another table's
    archive included) and the loader loaded them again."""
    from lakeinlet.incremental.commands.backfill import diff, without_archived
    from lakeinlet.incremental.heads import head_outcome
    from lakeinlet.incremental.objects import S3ObjectStore

    load(ledger, 0, ("a.json", put(s3, "a.json"), LOADED))
    assert cleanup(s3, ledger, record).run().done == {"archived": 1}
    put(s3, "new.json", bucket=ARCHIVE)  # a plain upload beside the archive
    store = S3ObjectStore(AwsSection(), s3=s3, parquet=parquet)
    plan = without_archived(diff(store.list(ARCHIVE, ""), set(), None), store)
    assert [o.key for o in plan.missing] == ["new.json"] and plan.archived == 1
    assert "1 archived copies (x-amz-meta-lakeinlet-source-identity" in plan.lines()[-1]
    objs = [PlannedObject(ARCHIVE, k, None, None, 1, k, datetime.now(UTC), 0)
            for k in (f"old/{SRC}/a.json", "new.json")]
    heads = store.head_many(objs)
    verdicts = [head_outcome(o, heads[(o.bucket, o.key)], 10**6) for o in objs]
    assert verdicts[1] is None and verdicts[0] is not None and verdicts[0].status == FILTERED
    assert verdicts[0].reason.startswith(f"an archived copy of a loaded object (s3://{ARCHIVE}/old/{SRC}/a.json")
