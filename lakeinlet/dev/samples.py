"""Small, deterministic sample files for the demo, the notebooks and the benchmarks: rows of one
schema (order_id, customer, amount, ts) as JSON lines, CSV or Parquet, so loaded rows can be
checked against what was uploaded."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

FORMATS = ("json", "csv", "parquet")
SCHEMA_DDL = "order_id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP"


@dataclass(frozen=True)
class SampleFile:
    """One uploaded sample object and the rows it holds."""

    key: str
    fmt: str
    rows: list[dict[str, Any]]
    body: bytes


def make_rows(file_no: int, n: int) -> list[dict[str, Any]]:
    """`n` rows whose `order_id`s are unique across files (file_no * 1_000_000 + i)."""
    base = datetime(2026, 11, 1, tzinfo=UTC)
    return [{"order_id": file_no * 1_000_000 + i, "customer": f"c{(file_no + i) % 97:03d}",
             "amount": round((file_no * 31 + i * 7) % 1000 / 10, 2),
             "ts": base + timedelta(minutes=file_no * 10 + i)} for i in range(n)]


def encode(rows: list[dict[str, Any]], fmt: str) -> bytes:
    """Serialise rows as `json` (lines), `csv` (with header) or `parquet`."""
    if fmt == "json":
        return "".join(json.dumps(r | {"ts": r["ts"].isoformat()}) + "\n" for r in rows).encode()
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["order_id", "customer", "amount", "ts"])
        writer.writeheader()
        writer.writerows(r | {"ts": r["ts"].isoformat()} for r in rows)
        return out.getvalue().encode()
    if fmt == "parquet":
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), sink)
        return sink.getvalue()
    raise ValueError(f"unknown sample format {fmt!r}: expected one of {', '.join(FORMATS)}")


def make_files(fmt: str, count: int, rows_per_file: int = 5, prefix: str | None = None,
               start: int = 0) -> list[SampleFile]:
    """`count` sample files of one format under `prefix` (default `<fmt>/`)."""
    prefix = f"{fmt}/" if prefix is None else prefix
    ext = {"json": "jsonl", "csv": "csv", "parquet": "parquet"}[fmt]
    files = []
    for n in range(start, start + count):
        rows = make_rows(n, rows_per_file)
        files.append(SampleFile(f"{prefix}part-{n:05d}.{ext}", fmt, rows, encode(rows, fmt)))
    return files


def upload(s3: Any, bucket: str, files: list[SampleFile]) -> int:
    """Upload the files with a boto3 S3 client; returns the bytes uploaded."""
    for f in files:
        s3.put_object(Bucket=bucket, Key=f.key, Body=f.body)
    return sum(len(f.body) for f in files)
