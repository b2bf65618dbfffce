"""What hudi-rs 0.5.0 cannot read: a table with a timestamp-without-zone column makes its Avro to
Arrow conversion panic ("not yet implemented"). The schema is converted here from the table's
Avro schema, and the rows are read through Spark."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from lakeinlet.errors import TerminalError

PRIMITIVES = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
              "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(), "null": pa.null()}
LOGICAL = {"date": pa.date32(), "timestamp-micros": pa.timestamp("us", tz="UTC"),
           "timestamp-millis": pa.timestamp("ms", tz="UTC"), "local-timestamp-micros": pa.timestamp("us"),
           "local-timestamp-millis": pa.timestamp("ms")}


def arrow_schema(avro: str) -> pa.Schema:
    """The Arrow schema of a Hudi table's Avro record schema (JSON)."""
    return pa.schema([_field(f) for f in json.loads(avro)["fields"]])


def _field(f: dict[str, Any]) -> pa.Field:
    t, nullable = f["type"], False
    if isinstance(t, list):
        nullable, t = "null" in t, next((x for x in t if x != "null"), "null")
    return pa.field(f["name"], _type(t), nullable=nullable)


def _type(t: Any) -> pa.DataType:
    if isinstance(t, list):  # a union with null: the other branch
        return _type(next((x for x in t if x != "null"), "null"))
    if isinstance(t, str):
        return PRIMITIVES[t]
    logical = t.get("logicalType")
    if logical == "decimal":
        return pa.decimal128(t["precision"], t.get("scale", 0))
    if logical in LOGICAL:
        return LOGICAL[logical]
    kind = t["type"]
    if kind == "record":
        return pa.struct([_field(f) for f in t["fields"]])
    if kind == "array":
        return pa.list_(_type(t["items"]))
    if kind == "map":
        return pa.map_(pa.string(), _type(t["values"]))
    if kind == "fixed":
        return pa.binary(t["size"])
    if kind == "enum":
        return pa.string()
    return _type(kind)


def panics(table: Any) -> bool:
    """Whether hudi-rs 0.5.0 panics converting this table's schema to Arrow ("not yet
    implemented"): it has a timestamp without time zone (Avro `local-timestamp-*`), which the
    schema, the file slices and every read of hudi-rs convert. Asked first, so no panic prints
    its Rust backtrace."""
    return '"local-timestamp-' in table.get_schema_in_avro_str()


def table_schema(table: Any) -> pa.Schema:
    """The table's Arrow schema: hudi-rs's, or converted here from its Avro schema."""
    return arrow_schema(table.get_schema_in_avro_str()) if panics(table) else pa.schema(table.get_schema())


def spark_rows(spark: Callable[[], Any], uri: str, columns: Sequence[str] | None) -> pa.Table:
    """The table's rows read by Hudi's Spark datasource, as Arrow (timestamps without zone kept).

    Raises:
        TerminalError: there is no Spark session to read with (`lakeinlet.observe` starts none).
    """
    try:
        session = spark()
    except RuntimeError as exc:
        raise TerminalError(f"{uri}: hudi-rs 0.5.0 cannot read a table with a timestamp without time "
                            f"zone (it panics), and {exc}: read it with Spark, "
                            f"spark.read.format('hudi').load('{uri}')") from exc
    from pyspark.sql.pandas.types import to_arrow_schema

    df = session.read.format("hudi").load(uri)
    df = df.select(*(columns or [c for c in df.columns if not c.startswith("_hoodie_")]))
    schema = to_arrow_schema(df.schema)
    return pa.Table.from_pandas(df.toPandas(), schema=schema, preserve_index=False)


def partition_paths(table: Any) -> set[str]:
    """The partition paths of the table's file slices (hudi-rs's, or, where it panics, those its
    active timeline's commits wrote: enough to register each new partition after its commit)."""
    if not panics(table):
        return {s.partition_path for s in table.get_file_slices()}
    timeline = table.get_timeline()
    metas = [json.loads(timeline.get_instant_metadata_in_json(i)) for i in timeline.get_completed_commits()]
    return {p for meta in metas for p in meta.get("partitionToWriteStats") or {}}
