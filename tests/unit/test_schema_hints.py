"""`--schema-hints` without Spark: the DDL read into Spark's types, the start-up refusals (one line
naming the setting; per route too), the verdict on values that do not cast, and the types an
object is judged by once hinted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from lakeinlet.config import resolve
from lakeinlet.errors import ConfigError, TerminalError
from lakeinlet.incremental import job
from lakeinlet.incremental.read import checks, hint_casts, schema_hints
from lakeinlet.incremental.read.schema_hints import HintError, parse
from lakeinlet.incremental.routes import routes_of
from lakeinlet.incremental.settings import LoaderConfig, ReadSection, TablesSection
from lakeinlet.incremental.transform_settings import TransformSection
from lakeinlet.incremental.wiring import hint_check

pytestmark = pytest.mark.unit
RUN = ["run", "--changelog", "s3://lake/changelog", "--table", "s3://lake/t", "--source-format", "json"]


def config(*flags: str, environ: dict[str, str] | None = None) -> LoaderConfig:
    return resolve(LoaderConfig, job.build_parser().parse_args([*RUN, *flags]), environ=environ or {})


def refusal(*flags: str) -> str:
    with pytest.raises(ConfigError) as refused:
        config(*flags)
    assert len(refused.value.problems) == 1 and "\n" not in refused.value.problems[0]
    return refused.value.problems[0]


def test_the_ddl_gives_sparks_types_in_order_keyed_without_case() -> None:
    hints = parse(" Price DECIMAL(10,2), ts timestamp, `odd name` ARRAY<STRUCT<a: INT, b STRING>>, "
                  "m map<string, bigint>, d DEC, n NUMERIC(5), v VARCHAR(3), z TIMESTAMP_NTZ ")
    assert list(hints) == ["price", "ts", "odd name", "m", "d", "n", "v", "z"]
    assert hints["price"] == ("Price", T.DecimalType(10, 2))
    assert hints["odd name"][1] == T.ArrayType(T.StructType([
        T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())]))
    assert [hints[n][1] for n in ("ts", "m", "d", "n", "v", "z")] == [
        T.TimestampType(), T.MapType(T.StringType(), T.LongType()), T.DecimalType(10, 0),
        T.DecimalType(5, 0), T.StringType(), T.TimestampNTZType()]
    assert parse("") == {} and parse(None) == {}


@pytest.mark.parametrize(("text", "said"), [
    ("price", "expected a type at the end of 'price'"),
    ("price DECIMAL(10", "expected ')' at the end of"),
    ("price money", "unknown type 'money' in 'price money'; expected one of bigint,"),
    ("price INT ts DATE", "expected ',', found 'ts'"),
    ("price INT;", "unexpected ';'"),
    ("price DECIMAL(40,2)", "DECIMAL(40,2) in 'price DECIMAL(40,2)': expected DECIMAL(p,s) with 1 <= p"),
    ("price DECIMAL(4,5)", "expected DECIMAL(p,s)"),
    ("price INT NOT NULL", "expected ',', found 'NOT'"),
    ("m MAP<STRING>", "expected ',', found '>'"),
    ("price INT, PRICE STRING", "column PRICE is given twice (price and PRICE: column names match without "
                                "case); give it once"),
    ("user.dob DATE", "user.…: nested paths are not supported; hint the whole column (user STRUCT<…>)"),
    ("_rescued_data STRING", "_rescued_data is a column lakeinlet writes itself: it takes no hint"),
])
def test_a_hint_that_does_not_parse_or_is_refused_says_so_in_one_line(text: str, said: str) -> None:
    with pytest.raises(HintError) as refused:
        parse(text)
    assert said in str(refused.value)
    assert refusal("--schema-hints", text) == f"--schema-hints: {refused.value}"


def test_the_flag_the_environment_and_the_refusals_beside_other_settings() -> None:
    assert config("--schema-hints", "price DECIMAL(10,2)").read.schema_hints == "price DECIMAL(10,2)"
    env = config(environ={"LAKEINLET__READ__SCHEMA_HINTS": "ts TIMESTAMP"})
    assert env.read.schema_hints == "ts TIMESTAMP"
    assert refusal("--schema-hints", "price DECIMAL(10,2)", "--schema", "id BIGINT, price STRING") == (
        "--schema-hints with --schema: the schema fixes every column's type; put the type in --schema "
        "instead (e.g. price DECIMAL(10,2))")
    assert "--source-format text" in refusal("--schema-hints", "value INT", "--source-format", "text")
    assert ReadSection(schema_hints="  ").validate() == []


def test_a_route_is_held_to_the_same_rules(tmp_path: Path) -> None:
    routes = tmp_path / "routes.toml"
    routes.write_text('[[route]]\nname = "a"\ntable = "s3://lake/a"\nschema_hints = "price DECIMAL(10,2)"\n'
                      '[[route]]\nname = "b"\ntable = "s3://lake/b"\nschema_hints = "price DECIMAL(10"\n')
    with pytest.raises(ConfigError) as refused:
        routes_of(config("--routes", str(routes), "--schema", "id BIGINT"))
    assert [p.split(":")[0] for p in refused.value.problems] == ["route a", "route b"]
    assert "put the type in --schema" in refused.value.problems[0]
    routes.write_text('[[route]]\nname = "a"\ntable = "s3://lake/a"\nschema_hints = "price DECIMAL(10,2)"\n')
    assert routes_of(config("--routes", str(routes)))[0].config.read.schema_hints == "price DECIMAL(10,2)"


def test_values_that_do_not_cast_set_the_object_aside_or_stop_the_run() -> None:
    found = "'price' is decimal(10,2) by --schema-hints but a string value in the object does not cast to it"
    assert schema_hints.unhinted("price", T.DecimalType(10, 2), T.StringType()) == found
    status, why = schema_hints.verdict(found, "s3a://b/k.json", fail=False)
    assert status == "schema_conflict" and "\n" not in why
    assert why.startswith(f"type conflict: column {found} (s3a://b/k.json). To load it: fix the values")
    assert "--on-type-conflict rescue" in why
    with pytest.raises(TerminalError, match=r"k\.json\)\. The checkpoint did not move"):
        schema_hints.verdict(found, "s3a://b/k.json", fail=True)


def test_an_object_is_judged_by_its_hinted_types_typed_files_only_where_the_cast_is_safe() -> None:
    hints = parse("price DECIMAL(10,2), n BIGINT")
    own = {"Price": T.StringType(), "n": T.IntegerType(), "id": T.LongType()}
    inferred = SimpleNamespace(hints=hints, settings=ReadSection(source_format="json"))
    assert hint_casts.viewed(inferred, own) == {
        "Price": T.DecimalType(10, 2), "n": T.LongType(), "id": T.LongType()}
    typed = SimpleNamespace(hints=hints, settings=ReadSection(source_format="parquet"))
    assert hint_casts.viewed(typed, own) == {"Price": T.StringType(), "n": T.LongType(), "id": T.LongType()}
    assert hint_casts.hint_for(hints, "PRICE") == T.DecimalType(10, 2)
    assert hint_casts.hint_for(hints, "id") is None


@pytest.mark.parametrize(("found", "hint", "safe"), [
    (T.IntegerType(), T.LongType(), True), (T.ByteType(), T.IntegerType(), True),
    (T.LongType(), T.IntegerType(), False), (T.IntegerType(), T.DecimalType(10, 0), True),
    (T.IntegerType(), T.DecimalType(10, 2), False), (T.LongType(), T.DecimalType(21, 2), True),
    (T.DecimalType(5, 2), T.DecimalType(10, 2), True), (T.DecimalType(10, 4), T.DecimalType(10, 2), False),
    (T.DoubleType(), T.DecimalType(10, 2), False), (T.DateType(), T.StringType(), True),
    (T.StringType(), T.DateType(), False), (T.BinaryType(), T.StringType(), False),
    (T.ArrayType(T.IntegerType()), T.StringType(), False), (T.FloatType(), T.DoubleType(), True),
])
def test_typed_files_are_cast_only_where_no_value_is_lost(found: object, hint: object, safe: bool) -> None:
    assert checks.casts_safely(found, hint) is safe


def test_a_hint_the_tables_column_cannot_take_is_refused_at_start() -> None:
    cfg = LoaderConfig(tables=TablesSection(changelog="s3://l/c", table="s3://l/t"),
                       read=ReadSection(source_format="json", schema_hints="price DECIMAL(10,2), n INT"))
    table = pa.schema([("Price", pa.string()), ("n", pa.int64()), ("id", pa.int64())])
    with pytest.raises(ConfigError) as refused:
        hint_check(cfg, SimpleNamespace(schema=lambda: table))
    assert refused.value.problems == [  # n INT widens to the table's bigint: cast as today
        "table s3://l/t: --schema-hints price DECIMAL(10,2): the table holds Price as string, into "
        "which a decimal(10,2) does not load; hint price STRING or drop the hint"]
    hint_check(cfg, SimpleNamespace(schema=lambda: None))  # no table yet: the hints make it
    hint_check(replace(cfg, transform=TransformSection("SELECT * FROM source")),
               SimpleNamespace(schema=lambda: table))  # the table's columns are the transform's
