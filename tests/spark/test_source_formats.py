"""Source formats and codecs as producers write them: one batch per format, one object per codec,
each loaded once (Delta: the format of the target cannot change how a source object is read)."""

from __future__ import annotations

import bz2
import gzip
import io
import tarfile
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lakeinlet import jars
from lakeinlet.aws import AwsSection, client
from lakeinlet.incremental.read import formats
from lakeinlet.incremental.settings import ReadSection
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration]


def _lines(codec: str) -> bytes:
    return f'{{"n": 1, "codec": "{codec}"}}\n{{"n": 2, "codec": "{codec}"}}\n'.encode()


def _zip(body: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("records.json", body)
    return out.getvalue()


def _tar_gz(body: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as t:
        info = tarfile.TarInfo("records.json")
        info.size = len(body)
        t.addfile(info, io.BytesIO(body))
    return out.getvalue()


def _load(spark: Any, aws: AwsSection, fmt: str, objects: dict[str, bytes], *options: str) -> Any:
    landing, lake, s3 = new_lake(aws)
    events = [put(s3, landing, key, body) for key, body in objects.items()]
    config = make_config(aws, lake, fmt, schema=None)
    p = parts(replace(config, read=ReadSection(source_format=fmt, read_option=options)), spark)
    record(p.changelog, events)
    p.loader().drain()
    return p


def _ledger(p: Any) -> dict[str, tuple[str, int, str]]:
    return {r["key"]: (r["status"], r["rows"], r["reason"] or "") for r in ledger_rows(p)}


def test_json_codecs_by_suffix_and_bytes_in_one_batch(spark: Any, aws: AwsSection) -> None:
    zstd = lambda b: pa.compress(b, "zstd", asbytes=True)  # noqa: E731
    readable = {"kc/t+0+000.json.gz": ("gzip", gzip.compress), "kc/t+0+001.json.bz2": ("bzip2", bz2.compress),
                "kc/t+0+002.json.zst": ("zstd", zstd), "kc/t+0+003.json.deflate": ("deflate", zlib.compress),
                # no suffix, or another one: read from a copy staged under the codec's suffix
                "firehose/stream-1-2026-11-27-00-00-00-abc": ("gzip, no suffix", gzip.compress),
                "raw/b.json": ("bzip2 under .json", bz2.compress), "raw/z[1]": ("zstd, no suffix", zstd)}
    aside = {"kc/t+0+004.json.lz4": pa.compress(_lines("lz4"), "lz4", asbytes=True),
             "kc/t+0+005.json.zip": _zip(_lines("zip")), "kc/t+0+006.tar.gz": _tar_gz(_lines("tar"))}
    p = _load(spark, aws, "json", {k: pack(_lines(c)) for k, (c, pack) in readable.items()} | aside)
    ledger = _ledger(p)
    assert {k: ledger[k][:2] for k in readable} == {k: ("loaded", 2) for k in readable}
    rows = target_rows(p)
    loaded = zip(rows.column("_source_key").to_pylist(), rows.column("codec").to_pylist(), strict=True)
    assert sorted(loaded) == sorted((k, c) for k, (c, _) in readable.items() for _ in range(2))
    assert {k: ledger[k][0] for k in aside} == {k: "corrupt" for k in aside}
    assert "lz4 frame-compressed" in ledger["kc/t+0+004.json.lz4"][2]
    assert "zip-compressed" in ledger["kc/t+0+005.json.zip"][2]
    assert "tar archive" in ledger["kc/t+0+006.tar.gz"][2]
    where = urlsplit(p.staging().prefix and f"s3://{p.staging().bucket}/{p.staging().prefix}")
    left = client("s3", aws).list_objects_v2(Bucket=where.netloc, Prefix=where.path.lstrip("/"))
    assert where.path.endswith("_ledger_staging/") and left.get("KeyCount", 0) == 0, \
        "a staged copy outlived its batch"


def _avro(spark: Any, tmp: Path, rows: list[tuple[Any, ...]], ddl: str, codec: str) -> bytes:
    out = tmp / codec
    spark.createDataFrame(rows, ddl).coalesce(1).write.format("avro").option("compression", codec) \
        .save(str(out))
    return next(out.glob("*.avro")).read_bytes()


def _parquet(codec: str) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({"n": [1, 2], "codec": [codec, codec]}), out, compression=codec)
    return out.getvalue()


def test_avro_evolves_and_parquet_codecs_load(spark: Any, aws: AwsSection, tmp_path: Path) -> None:
    # Kafka Connect's Avro: `+` in keys, `partition=N`; a later object adds a column, which Spark's
    # Avro reader would drop (it takes one file's schema), and one codec per object; `partition`
    # comes from the key (a string: read/key_values.py).
    avro = {"topics/orders/partition=0/orders+0+0000000000.avro":
            _avro(spark, tmp_path, [(1, "a")], "id long, name string", "deflate"),
            "topics/orders/partition=1/orders+1+0000000000.avro":
            _avro(spark, tmp_path, [(2, "b", "eu")], "id long, name string, region string", "snappy"),
            "topics/orders/partition=1/orders+1+0000000001.avro":
            _avro(spark, tmp_path, [(3, "c")], "id long, name string", "zstandard")}
    clash = {"topics/orders/partition=2/orders+2+0000000000.avro":
             _avro(spark, tmp_path, [("four", "d")], "id string, name string", "uncompressed")}
    p = _load(spark, aws, "avro", avro | clash)
    ledger = _ledger(p)
    assert {k: ledger[k][:2] for k in avro} == {k: ("loaded", 1) for k in avro}
    assert [v[0] for k, v in ledger.items() if k in clash] == ["schema_conflict"]
    assert "'id' is bigint in most objects of the batch but string" in ledger[next(iter(clash))][2]
    rows = target_rows(p).select(["id", "name", "region", "partition"]).to_pylist()
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": 1, "name": "a", "region": None, "partition": "0"},
                                                   {"id": 2, "name": "b", "region": "eu", "partition": "1"},
                                                   {"id": 3, "name": "c", "region": None, "partition": "1"}]
    codecs = ("snappy", "gzip", "zstd", "lz4", "brotli")  # brotli: no codec on Spark's classpath
    p = _load(spark, aws, "parquet", {f"vpc/{c}.parquet": _parquet(c) for c in codecs})
    ledger = _ledger(p)
    assert {k: v[:2] for k, v in ledger.items()} == {f"vpc/{c}.parquet": ("loaded", 2) for c in codecs[:-1]} \
        | {"vpc/brotli.parquet": ("corrupt", 0)}
    assert "BrotliCodec" in ledger["vpc/brotli.parquet"][2] and "brotli" in ledger["vpc/brotli.parquet"][2]


ALB = (b"http 2026-11-27T00:00:01Z app/lb 1.2.3.4:5 - 0.1 200\n"
       b"http 2026-11-27T00:00:02Z app/lb 1.2.3.4:6 - 0.2 404\n")


def test_text_is_one_row_per_line(spark: Any, aws: AwsSection) -> None:
    p = _load(spark, aws, "text", {"elb/a.log": ALB, "elb/b.log.gz": gzip.compress(ALB)})
    assert {k: v[:2] for k, v in _ledger(p).items()} == {"elb/a.log": ("loaded", 2),
                                                         "elb/b.log.gz": ("loaded", 2)}
    got = target_rows(p)
    assert sorted(zip(got.column("_source_key").to_pylist(), got.column("value").to_pylist(), strict=True)) \
        == sorted((k, line) for k in ("elb/a.log", "elb/b.log.gz") for line in ALB.decode().splitlines())


@pytest.mark.skipif(jars.installed_line() not in formats.XML_LINES, reason="XML reads on Spark 4.1 only")
def test_xml_rows_lineage_and_quarantine(spark: Any, aws: AwsSection) -> None:
    good = b"<rows><record><id>1</id></record><record><id>2</id><tag>x</tag></record></rows>"
    bad = b"<rows><record><id>3</id></record><record><id>4</tag></record></rows>"
    p = _load(spark, aws, "xml", {"x/good.xml": good, "x/bad.xml.gz": gzip.compress(bad)}, "rowTag=record")
    ledger = _ledger(p)
    assert ledger["x/good.xml"][:2] == ("loaded", 2) and ledger["x/bad.xml.gz"][:2] == ("loaded", 1)
    rows = target_rows(p).select(["id", "tag", "_source_key"]).to_pylist()
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": 1, "tag": None, "_source_key": "x/good.xml"},
                                                   {"id": 2, "tag": "x", "_source_key": "x/good.xml"},
                                                   {"id": 3, "tag": None, "_source_key": "x/bad.xml.gz"}]
    assert [r["_source_key"] for r in p.quarantine.read().to_pylist()] == ["x/bad.xml.gz"]
