"""Delta compaction on a local table committed as the loader commits (no Spark): runs of small
files per partition, a dataChange=false commit that leaves the checkpoint and the loader's history
alone, a dry run, and the races with loader commits in both orders."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, TableFeatures
from deltalake.transaction import RemoveAction

from lakeinlet.aws import AwsSection
from lakeinlet.errors import CommitConflict, TerminalError
from lakeinlet.incremental.model import Position
from lakeinlet.incremental.targets.delta import maintain as dm
from lakeinlet.incremental.targets.delta import swap as sw
from lakeinlet.incremental.targets.delta.files import data_files
from lakeinlet.incremental.targets.delta.target import DeltaTarget, Staged

pytestmark = pytest.mark.unit
SCHEMA = pa.schema([("order_id", pa.int64()), ("_source_key", pa.string()), ("customer", pa.string())])
MIB = 1024 * 1024


def target(tmp_path: Path) -> DeltaTarget:
    return DeltaTarget(str(tmp_path / "orders"), AwsSection(), "app", ("customer",))


def load(t: DeltaTarget, n: int, columns: dict[str, list[object]] | None = None,
         schema: pa.Schema = SCHEMA) -> int:
    """Batch `n` as the loader commits it: a Parquet file per customer under data/b<n>/, and the
    checkpoint moved from n-1 to n."""
    for customer in ("c1", "c2"):
        folder = Path(t.root) / f"data/b{n}/customer={customer}"
        folder.mkdir(parents=True)
        ids = [n * 10 + (customer == "c2") * 5 + i for i in range(2)]
        extra = {k: v for k, v in (columns or {}).items()}
        pq.write_table(pa.table({"order_id": ids, "_source_key": [f"k{n}"] * 2, **extra}),
                       folder / "part-00000.parquet")
    staged = Staged(t, [], data_files(t.fs, t.root, f"data/b{n}", ["customer"]), Position(n - 1),
                    Position(n), f"b{n}", schema)
    return t.publish(staged)


def ids(t: DeltaTarget) -> list[int]:
    return sorted(t.rows(["order_id"]).column("order_id").to_pylist())


def log_actions(t: DeltaTarget, version: int) -> list[dict[str, dict[str, object]]]:
    text = (Path(t.root) / "_delta_log" / f"{version:020d}.json").read_text()
    return [json.loads(line) for line in text.splitlines()]


def live(paths: list[tuple[str, int]]) -> list[dm.Live]:
    return [dm.Live(p, size, p.rpartition("/")[0]) for p, size in paths]


def test_runs_are_consecutive_small_files_of_one_partition_up_to_the_target() -> None:
    files = live([("a/1", 40), ("a/2", 40), ("a/3", 40), ("a/4", 200), ("a/5", 10), ("a/6", 10),
                  ("b/1", 30), ("c/1", 10), ("c/2", 100)])
    runs = dm.plan(files, 100)
    assert [[f.path for f in r] for r in runs] == [["a/1", "a/2"], ["a/5", "a/6"]]
    assert [len(r) for r in dm.plan(files, 1000)] == [6, 2]  # b's one small file is left alone


def test_small_files_become_one_per_partition_in_a_data_change_free_commit(tmp_path: Path) -> None:
    t = target(tmp_path)
    for n in range(5):
        load(t, n)
    before, batches = ids(t), t.batches_after(-1)
    done = t.compact(MIB, 168, dry_run=False)
    assert (done.files_before, done.files_after, done.rewritten) == (10, 2, 10)
    assert done.version == int(DeltaTable(t.uri).version()) and done.bytes_after < done.bytes_before
    assert ids(t) == before
    actions = log_actions(t, done.version)
    files = [a.get("add") or a.get("remove") for a in actions if "add" in a or "remove" in a]
    assert len(files) == 12 and {f["dataChange"] for f in files} == {False}  # type: ignore[index]
    latest = DeltaTable(t.uri).history(1)[0]  # what DESCRIBE HISTORY shows: a rewrite, not an append
    assert latest["operation"] == "OPTIMIZE" and latest["operationParameters"]["targetSize"] == str(MIB)
    assert latest["operationMetrics"] == {"numRemovedFiles": "10", "numAddedFiles": "2",
                                          "numRemovedBytes": str(done.bytes_before),
                                          "numAddedBytes": str(done.bytes_after)}
    assert [a["txn"]["version"] for a in actions if "txn" in a] == [4]  # the checkpoint, as it was
    assert DeltaTable(t.uri).transaction_version("app") == 4
    assert t.checkpoint().position == Position(4) and t.batches_after(-1) == batches
    assert t.commits(1)[0].operation == dm.COMPACT and not t.commits(1)[0].is_ours("app")
    assert t.compact(MIB, 168, dry_run=False).version is None  # nothing left to rewrite


def test_a_dry_run_counts_what_a_compaction_then_rewrites(tmp_path: Path) -> None:
    t = target(tmp_path)
    for n in range(3):
        load(t, n)
    head = int(DeltaTable(t.uri).version())
    planned = t.compact(MIB, 168, dry_run=True)
    assert int(DeltaTable(t.uri).version()) == head and planned.version is None
    assert (planned.files_before, planned.files_after, planned.rewritten) == (6, 2, 6)
    assert t.compact(MIB, 168, dry_run=False).rewritten == planned.rewritten


@pytest.mark.parametrize("what", ["removal", "append"])
def test_a_loader_commit_read_before_a_compaction_loses_to_it(tmp_path: Path, what: str) -> None:
    t = target(tmp_path)
    for n in range(3):
        load(t, n)
    stale = DeltaTable(t.uri)  # what the loader read when it staged its batch
    first = pa.table(stale.get_add_actions(flatten=True)).to_pylist()[0]
    t.compact(MIB, 168, dry_run=False)
    gone = RemoveAction(first["path"], True, 0, first["size_bytes"],
                        {"customer": first["partition.customer"]})
    actions = [gone] if what == "removal" else []
    with pytest.raises(CommitConflict):  # without the compaction's txn, the removal would commit
        t._commit(stale, actions, Position(3), {})  # and its rows live on in the compacted file
    assert t.checkpoint().position == Position(2) and len(ids(t)) == 12


def racing(t: DeltaTarget, loader_commit: Callable[[], object],
           times: int) -> Callable[[], DeltaTable | None]:
    """`t.table`, with a loader commit landing just after each of the first `times` commit
    attempts read the table (the planning read excluded)."""
    calls = 0

    def latest() -> DeltaTable | None:
        nonlocal calls
        dt, calls = t.table(), calls + 1
        if 1 < calls <= times + 1:
            loader_commit()
        return dt

    return latest


def test_a_compaction_that_loses_to_a_loader_commit_commits_again(tmp_path: Path) -> None:
    t, loader = target(tmp_path), target(tmp_path)
    for n in range(3):
        load(t, n)
    pauses: list[float] = []
    done = dm.compact_table(racing(t, lambda: load(loader, 3), 1), t.fs, t.root, t.store, t.uri, "app", MIB,
                            False, pauses.append)
    assert pauses == [dm.PAUSE] and done.rewritten == 6
    assert DeltaTable(t.uri).transaction_version("app") == 3 and t.checkpoint().position == Position(3)
    assert len(ids(t)) == 16 and len(DeltaTable(t.uri).file_uris()) == 4  # batch 3's files wait


def test_a_compaction_gives_up_after_losing_every_attempt(tmp_path: Path) -> None:
    t, loader = target(tmp_path), target(tmp_path)
    for n in range(2):
        load(t, n)
    batches = iter(range(2, 2 + dm.ATTEMPTS))
    pauses: list[float] = []
    with pytest.raises(CommitConflict, match="lost 4 commit races"):
        dm.compact_table(racing(t, lambda: load(loader, next(batches)), dm.ATTEMPTS), t.fs, t.root, t.store,
                         t.uri, "app", MIB, False, pauses.append)
    assert pauses == [dm.PAUSE * 2 ** i for i in range(dm.ATTEMPTS - 1)]  # lakeinlet.retry's schedule
    assert not [c for c in t.commits() if c.operation == dm.COMPACT]
    assert not list((Path(t.root) / "data").glob("compact-*/*/*.parquet"))  # what it wrote is deleted
    assert len(ids(t)) == 4 * (2 + dm.ATTEMPTS)


def test_a_run_whose_file_a_loader_removed_meanwhile_is_dropped(tmp_path: Path) -> None:
    t, loader = target(tmp_path), target(tmp_path)
    for n in range(3):
        load(t, n)

    def remove_a_c1_file() -> None:
        dt = loader.table()
        assert dt is not None
        gone = next(a for a in pa.table(dt.get_add_actions(flatten=True)).to_pylist()
                    if a["partition.customer"] == "c1")
        loader._commit(dt, [RemoveAction(gone["path"], True, 0, gone["size_bytes"], {"customer": "c1"})],
                       Position(3), {})

    done = dm.compact_table(racing(t, remove_a_c1_file, 1), t.fs, t.root, t.store, t.uri, "app", MIB, False,
                            lambda _: None)
    assert done.rewritten == 3 and dm.DROPPED.format(1) in done.detail
    assert len(ids(t)) == 10  # the removed rows stay removed


def test_columns_added_after_a_file_was_written_are_null_in_the_rewrite(tmp_path: Path) -> None:
    t = target(tmp_path)
    load(t, 0)
    wider = SCHEMA.append(pa.field("region", pa.string()))
    load(t, 1, {"region": ["eu", "eu"]}, wider)
    t.compact(MIB, 168, dry_run=False)
    regions = t.rows(["order_id", "region"]).to_pylist()
    assert sorted((r["order_id"], r["region"]) for r in regions) == [
        (0, None), (1, None), (5, None), (6, None), (10, "eu"), (11, "eu"), (15, "eu"), (16, "eu")]


def test_no_table_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TerminalError, match="no Delta table there yet"):
        target(tmp_path).compact(MIB, 168, dry_run=False)


def test_partition_values_spark_escapes_compact_to_the_same_rows(tmp_path: Path) -> None:
    t = DeltaTarget(str(tmp_path / "orders"), AwsSection(), "app", ("customer",))
    for n, customer in enumerate(["a b%/c", "a b%/c", "ü=1"]):  # folders customer=a%20b%25%2Fc, …
        folder = Path(t.root) / f"data/b{n}/customer={quote(customer, safe='=')}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"order_id": [n], "_source_key": [f"k{n}"]}), folder / "part-00000.parquet")
        t.publish(Staged(t, [], data_files(t.fs, t.root, f"data/b{n}", ["customer"]), Position(n - 1),
                         Position(n), f"b{n}", SCHEMA))
    done = t.compact(MIB, 168, dry_run=False)
    assert (done.files_before, done.files_after) == (3, 2)
    rows = DeltaTable(t.uri).to_pyarrow_table().to_pylist()
    assert sorted((r["order_id"], r["customer"]) for r in rows) == [(0, "a b%/c"), (1, "a b%/c"), (2, "ü=1")]


class TakenOnce:
    """A store whose conditional PUT answers 'taken' once although it wrote (a retried PUT whose
    first try landed)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def put(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def put_if_absent(self, path: str, data: bytes) -> bool:
        self.files[path] = data
        return False

    def get(self, path: str) -> bytes | None:
        return self.files.get(path)


def test_a_commit_found_already_there_is_ours_when_it_carries_our_id() -> None:
    store = TakenOnce()
    body = sw.commit_body(3, [], [], ("app", 4), {}, {}, "c0ffee")
    assert sw.put(store, 4, body, "c0ffee")
    assert not sw.put(store, 5, sw.commit_body(3, [], [], None, {}, {}, "other"), "mine")


def test_a_table_whose_protocol_needs_more_is_refused_before_any_rewrite(tmp_path: Path) -> None:
    t = target(tmp_path)
    for n in range(2):
        load(t, n)
    DeltaTable(t.uri).alter.add_feature([TableFeatures.DeletionVectors],
                                        allow_protocol_versions_increase=True)
    with pytest.raises(TerminalError, match=r"writer feature.*deletionVectors.*delta-spark's OPTIMIZE"):
        t.compact(MIB, 168, dry_run=False)
    assert not list((Path(t.root) / "data").glob("compact-*"))
