"""Bad input gets a ledger row each and never fails the run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.samples import make_files
from lakeinlet.incremental.objects import S3ObjectStore
from tests.spark.loader_helpers import (
    ledger_rows,
    make_config,
    new_lake,
    parts,
    put,
    record,
    target_rows,
    two_row_groups_second_corrupt,
)
from tests.targets import Crash, crashing

pytestmark = [pytest.mark.spark, pytest.mark.integration]
DATA = Path(__file__).resolve().parents[1] / "data" / "loader"


def _ledger(p: Any) -> dict[str, tuple[str, int, str]]:
    return {r["key"]: (r["status"], r["rows"], r["reason"]) for r in ledger_rows(p)}


def test_bad_parquet_inputs_each_get_a_ledger_row(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    good = make_files("parquet", 2, 3)
    events = [put(s3, landing, f.key, f.body) for f in good]
    events.append(put(s3, landing, "parquet/corrupt.parquet", (DATA / "corrupt.parquet").read_bytes()))
    events.append(put(s3, landing, "parquet/empty.parquet", b""))
    gone = put(s3, landing, "parquet/gone.parquet", good[0].body)
    s3.delete_object(Bucket=landing, Key="parquet/gone.parquet")
    big = put(s3, landing, "parquet/big.parquet", make_files("parquet", 1, 400, start=9)[0].body)
    p = parts(make_config(aws, lake, max_bytes=4000), spark)
    record(p.changelog, [*events, gone, big])
    summary = p.loader().drain()
    ledger = _ledger(p)
    assert ledger[good[0].key][:2] == ("loaded", 3) and ledger[good[1].key][:2] == ("loaded", 3)
    assert ledger["parquet/corrupt.parquet"][0] == "corrupt"
    assert ledger["parquet/corrupt.parquet"][2]  # the error text is kept
    assert ledger["parquet/empty.parquet"][:2] == ("loaded", 0)
    assert ledger["parquet/gone.parquet"][0] == "missing"
    assert ledger["parquet/big.parquet"][0] == "too_large"
    assert sorted(target_rows(p).column("order_id").to_pylist()) == sorted(
        r["order_id"] for f in good for r in f.rows)
    assert summary.batches >= 1


def test_json_garbage_lines_are_dropped_and_counted(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    mixed = put(s3, landing, "json/mixed.jsonl", (DATA / "garbage_lines.jsonl").read_bytes())
    allbad = put(s3, landing, "json/allbad.jsonl", b"not json\n{broken\n")
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [mixed, allbad])
    p.loader().drain()
    ledger = {r["key"]: r for r in ledger_rows(p)}
    assert (ledger["json/mixed.jsonl"]["status"], ledger["json/mixed.jsonl"]["rows"],
            ledger["json/mixed.jsonl"]["bad_records"]) == ("loaded", 3, 2)
    assert ledger["json/allbad.jsonl"]["status"] == "corrupt"
    assert sorted(target_rows(p).column("order_id").to_pylist()) == [1, 2, 3]


class LyingStore(S3ObjectStore):
    """HEAD says the object is there; it is deleted before Spark reads it."""

    def head_many(self, objs: Any) -> Any:
        heads = super().head_many(objs)
        for o in objs:
            self.s3.delete_object(Bucket=o.bucket, Key=o.key)
        return heads


def test_object_deleted_between_head_and_read_is_missing(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    f = make_files("parquet", 1, 2)[0]
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, f.key, f.body)])
    loader = p.loader()
    loader.store = LyingStore(aws)
    loader.drain()
    assert _ledger(p)[f.key][0] == "missing"


def test_corrupt_parquet_keeps_the_root_cause(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, "c.parquet", (DATA / "corrupt.parquet").read_bytes()),
                         put(s3, landing, "text.parquet", b"hello, this is text\n" * 4)])
    p.loader().drain()
    ledger = _ledger(p)
    for key in ("c.parquet", "text.parquet"):
        assert ledger[key][0] == "corrupt" and "An error occurred while calling" not in ledger[key][2]
    assert "corrupted file: the footer index is not within the file" in ledger["c.parquet"][2]
    assert "is not a Parquet file" in ledger["text.parquet"][2]
    assert "magic number" in ledger["text.parquet"][2]


def test_malformed_records_are_kept_with_object_and_line(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    body = (DATA / "garbage_lines.jsonl").read_bytes() + b"this is not json\n"
    mixed = put(s3, landing, "json/mixed.jsonl", body)
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [mixed])
    p.loader().drain()
    kept = sorted((r["_source_key"], r["line"], r["record"]) for r in p.quarantine.read().to_pylist())
    assert kept == [("json/mixed.jsonl", 2, "this is not json"), ("json/mixed.jsonl", 4, '{"order_id": oops'),
                    ("json/mixed.jsonl", 6, "this is not json")]
    assert {r["_source_etag"] for r in p.quarantine.read().to_pylist()} == {mixed.etag}
    assert sorted(target_rows(p).column("order_id").to_pylist()) == [1, 2, 3]


def test_keys_with_glob_characters_load_exactly_that_object(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 4, 2)
    keys = ["in/report[1].parquet", "in/a{b,c}.parquet", "in/*.parquet", "in/what?.parquet"]
    sibling = put(s3, landing, "in/report1.parquet", make_files("parquet", 1, 5, start=7)[0].body)
    events = [put(s3, landing, k, f.body) for k, f in zip(keys, files, strict=True)]
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, events)
    p.loader().drain()
    assert sibling.key not in {r["key"] for r in ledger_rows(p)}
    assert {r["key"]: (r["status"], r["rows"]) for r in ledger_rows(p)} == {k: ("loaded", 2) for k in keys}
    rows = target_rows(p)
    assert sorted(zip(rows.column("_source_key").to_pylist(), rows.column("order_id").to_pylist(),
                      strict=True)) == sorted((k, r["order_id"]) for k, f in zip(keys, files, strict=True)
                                              for r in f.rows)




def test_parquet_with_a_corrupt_later_row_group_is_quarantined_not_loaded_halfway(
        spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    good = make_files("parquet", 1, 3)[0]
    p = parts(make_config(aws, lake), spark)
    record(p.changelog, [put(s3, landing, "half.parquet", two_row_groups_second_corrupt()),
                         put(s3, landing, good.key, good.body)])
    p.loader().drain()
    ledger = _ledger(p)
    assert ledger["half.parquet"][0] == "corrupt", ledger["half.parquet"]
    assert ledger[good.key][:2] == ("loaded", 3)
    assert sorted(target_rows(p).column("_source_key").to_pylist()) == [good.key] * 3


class OverwritingStore(S3ObjectStore):
    """HEAD sees version 1; the object is overwritten (new size) before Spark reads it."""

    def __init__(self, aws: AwsSection, body: bytes) -> None:
        super().__init__(aws)
        self.body = body

    def head_many(self, objs: Any) -> Any:
        heads = super().head_many(objs)
        for o in objs:
            self.s3.put_object(Bucket=o.bucket, Key=o.key, Body=self.body)
        return heads


@pytest.mark.parametrize("fmt", ["parquet", "json"])  # footer etag check; Spark's size/mtime check
def test_object_overwritten_between_head_and_read_is_not_loaded_under_the_old_identity(
        spark: Any, aws: AwsSection, fmt: str) -> None:
    landing, lake, s3 = new_lake(aws)
    old, new = make_files(fmt, 1, 3)[0], make_files(fmt, 1, 10, start=5)[0]
    p = parts(make_config(aws, lake, fmt), spark)
    first = put(s3, landing, "x.parquet", old.body)
    record(p.changelog, [first])
    loader = p.loader()
    loader.store = OverwritingStore(aws, new.body)
    loader.drain()
    status, rows, reason = _ledger(p)["x.parquet"]
    assert (status, rows) == ("filtered", 0) and "overwritten during the load" in reason
    assert p.target.schema() is None or target_rows(p).num_rows == 0
    second = put(s3, landing, "x.parquet", new.body)  # its own event loads the new bytes, once
    record(p.changelog, [second])
    p.loader().drain()
    assert sorted(target_rows(p).column("order_id").to_pylist()) == [r["order_id"] for r in new.rows]


def test_a_csv_of_only_its_header_is_a_valid_empty_object(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    good = make_files("csv", 1, 2)[0]
    header = good.body.decode().splitlines()[0] + "\n"
    events = [put(s3, landing, good.key, good.body), put(s3, landing, "csv/only-header.csv", header.encode())]
    p = parts(make_config(aws, lake, "csv"), spark)
    record(p.changelog, events)
    p.loader().drain()
    ledger = _ledger(p)
    assert ledger["csv/only-header.csv"][:2] == ("loaded", 0)
    assert ledger[good.key][:2] == ("loaded", 2) and target_rows(p).num_rows == 2


def test_a_batch_of_only_unparseable_json_is_set_aside_not_a_crash(spark: Any, aws: AwsSection) -> None:
    """Without --schema, a batch in which no record parses has only Spark's corrupt-record column,
    which Spark refuses to query: each object is judged alone, and the loader goes on."""
    landing, lake, s3 = new_lake(aws)
    good = make_files("json", 1, 2)[0]
    p = parts(make_config(aws, lake, "json", schema=None), spark)
    record(p.changelog, [put(s3, landing, good.key, good.body)])
    p.loader().drain()  # the table exists, with the good object's columns
    record(p.changelog, [put(s3, landing, "json/garbage.jsonl", b"\x00\x01 not json\n{broken\n"),
                         put(s3, landing, "json/blank.jsonl", b"\n\n")])
    p.loader().drain()
    ledger = _ledger(p)
    assert ledger["json/garbage.jsonl"][0] == "corrupt" and ledger["json/garbage.jsonl"][2]
    assert ledger["json/blank.jsonl"][:2] == ("loaded", 0)
    assert target_rows(p).num_rows == 2 and p.target.checkpoint().position is not None
    assert p.target.checkpoint().position.complete == 1


def test_records_concatenated_without_newlines_are_set_aside_never_loaded_short(
        spark: Any, aws: AwsSection) -> None:
    """Firehose's default output: Spark's JSON reader reads the first record of a line only."""
    landing, lake, s3 = new_lake(aws)
    good = make_files("json", 1, 2)[0]
    firehose = b'{"order_id":7}{"order_id":8}{"order_id":9}'
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [put(s3, landing, good.key, good.body),
                         put(s3, landing, "fh/plain", firehose),
                         put(s3, landing, "fh/zipped.gz", gzip.compress(firehose))])
    p.loader().drain()
    ledger = _ledger(p)
    for key in ("fh/plain", "fh/zipped.gz"):
        assert ledger[key][:2] == ("corrupt", 0)
        assert "concatenated without newlines" in ledger[key][2] and "delimiter" in ledger[key][2]
    assert ledger[good.key][:2] == ("loaded", 2) and target_rows(p).num_rows == 2


def test_records_that_are_not_utf8_are_quarantined_even_after_a_crash_before_the_quarantine(
        spark: Any, aws: AwsSection) -> None:
    """Binary lines (gzip bytes under a plain name, a Latin-1 line) used to crash the quarantine's
    commit after the target's, for ever: its records were lost and its table left unreadable."""
    landing, lake, s3 = new_lake(aws)
    body = b'{"order_id":1}\n\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff\n{"order_id":2}\nZ\xfcrich\n'
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [put(s3, landing, "json/binary.jsonl", body)])
    with pytest.raises(Crash):
        crashing(p.loader(), "committed").run_batch()  # the target committed, the quarantine not
    p.loader().drain()  # the next run records what the crashed one did not
    kept = sorted((r["line"], r["record"]) for r in p.quarantine.read().to_pylist())
    assert [line for line, _ in kept] == [2, 4] and kept[1][1] == "Z\ufffdrich"
    assert kept[0][1] == "\x1f\ufffd\x08\x00\x00\x00\x00\x00\x02\ufffd"  # gzip's header: 8b, ff do not decode
    assert _ledger(p)["json/binary.jsonl"][:2] == ("loaded", 2) and target_rows(p).num_rows == 2


def test_reasons_say_what_the_bytes_are_and_what_to_do(spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    good = make_files("json", 1, 2)[0]
    avro = b'Obj\x01\x04\x14avro.codec\x08null\x16avro.schema\x1e{"type":"int"}\x00' + bytes(16) + b"\x02"
    objects = {good.key: good.body, "gz/plain.json": gzip.compress(b'{"order_id":1}\n{"order_id":2}\n'),
               "doc/array.json": json.dumps([{"order_id": 5, "customer": "x"}], indent=2).encode(),
               "avro/a.json": avro,
               "deep/a.json": b'{"order_id":1,"n":' + b"[" * 2000 + b"]" * 2000 + b"}\n"}
    p = parts(make_config(aws, lake, "json"), spark)
    record(p.changelog, [put(s3, landing, k, b) for k, b in objects.items()])
    p.loader().drain()
    found = {r["key"]: (r["status"], r["bad_records"], r["reason"]) for r in ledger_rows(p)}
    plain, array = found["gz/plain.json"], found["doc/array.json"]
    # Judged by its first bytes before the read (read/codecs.py): never read as garbage lines,
    # but from a copy staged under .gz (read/staging.py)
    assert plain[:2] == ("loaded", 0)
    assert array[0] == "corrupt" and "multiLine=true" in array[2] and f"({array[1]} malformed)" in array[2]
    assert found["avro/a.json"][0] == "corrupt" and "an Avro container file" in found["avro/a.json"][2]
    assert found["deep/a.json"][0] == "corrupt" and "flatten" in found["deep/a.json"][2]
    assert not any("none in the batch's read" in why for _, _, why in found.values())
    assert found[good.key][0] == "loaded" and target_rows(p).num_rows == 4


def test_a_latin1_csv_read_as_utf8_says_how_many_rows_hold_replacement_characters(
        spark: Any, aws: AwsSection) -> None:
    landing, lake, s3 = new_lake(aws)
    latin1 = "order_id,customer,amount,ts\n1,Zürich,1.0,\n2,Genève,2.0,\n3,Bern,3.0,\n".encode("latin-1")
    utf8 = "order_id,customer,amount,ts\n4,Zürich,4.0,\n".encode()
    p = parts(make_config(aws, lake, "csv"), spark)
    record(p.changelog, [put(s3, landing, "csv/latin1.csv", latin1), put(s3, landing, "csv/utf8.csv", utf8)])
    p.loader().drain()
    ledger = _ledger(p)
    assert ledger["csv/latin1.csv"][:2] == ("loaded", 3) and ledger["csv/latin1.csv"][2].startswith(
        "2 rows hold U+FFFD") and "--read-option encoding=" in ledger["csv/latin1.csv"][2]
    assert ledger["csv/utf8.csv"] == ("loaded", 1, "")
