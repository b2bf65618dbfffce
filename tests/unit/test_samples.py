"""Sample data sets decode back to the rows they claim to hold."""

from __future__ import annotations

import csv
import io
import json

import pyarrow.parquet as pq
import pytest

from lakeinlet.dev.samples import encode, make_files, make_rows

pytestmark = pytest.mark.unit


def test_order_ids_are_unique_across_files() -> None:
    ids = [r["order_id"] for f in make_files("json", 5, 4) for r in f.rows]
    assert len(ids) == len(set(ids)) == 20


@pytest.mark.parametrize("fmt", ["json", "csv", "parquet"])
def test_each_format_round_trips(fmt: str) -> None:
    rows = make_rows(3, 4)
    body = encode(rows, fmt)
    if fmt == "json":
        back = [json.loads(line) for line in body.decode().splitlines()]
    elif fmt == "csv":
        back = list(csv.DictReader(io.StringIO(body.decode())))
    else:
        back = pq.read_table(io.BytesIO(body)).to_pylist()
    assert [int(r["order_id"]) for r in back] == [r["order_id"] for r in rows]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown sample format 'xml'"):
        encode([], "xml")
