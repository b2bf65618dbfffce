"""Where hudi-rs 0.5.0 panics (a timestamp without time zone): the schema converted from Avro, and
a read without Spark refused in one line."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.targets.hudi import arrow_fallback as af

AVRO = json.dumps({"type": "record", "name": "r", "fields": [
    {"name": "id", "type": ["null", "long"]},
    {"name": "t", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
    {"name": "price", "type": ["null", {"type": "fixed", "name": "f", "size": 5, "logicalType": "decimal",
                                        "precision": 10, "scale": 2}]},
    {"name": "tags", "type": ["null", {"type": "array", "items": ["null", "string"]}]},
    {"name": "attrs", "type": ["null", {"type": "map", "values": ["null", "double"]}]},
    {"name": "s", "type": ["null", {"type": "record", "name": "s",
                                    "fields": [{"name": "ok", "type": "boolean"}]}]},
]})


class Table:
    def get_schema_in_avro_str(self) -> str:
        return AVRO


def test_the_schema_of_a_table_hudi_rs_cannot_convert() -> None:
    assert af.panics(Table())
    assert af.table_schema(Table()) == pa.schema([
        ("id", pa.int64()), ("t", pa.timestamp("us")),
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False), ("d", pa.date32()),
        ("price", pa.decimal128(10, 2)), ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.float64())),
        ("s", pa.struct([pa.field("ok", pa.bool_(), nullable=False)]))])


def test_rows_without_spark_are_refused_in_one_line() -> None:
    def no_spark() -> Any:
        raise RuntimeError("lakeinlet.observe.frames only reads: it starts no Spark session")

    with pytest.raises(TerminalError, match=r"^/t: hudi-rs 0.5.0 cannot read a table with a timestamp "
                                            r"without time zone \(it panics\), and lakeinlet.observe"):
        af.spark_rows(no_spark, "/t", None)
