"""Target tables registered in the Glue Data Catalog: names, types, what each format's entry holds,
and create / repair / partitions against moto's in-process Glue."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError, TerminalError, TransientError
from lakeinlet.incremental.registry import CatalogRef, parse_catalog
from lakeinlet.incremental.registry.entry import TableEntry, hive_type, table_entry
from lakeinlet.incremental.registry.glue import GlueRegistry
from lakeinlet.incremental.targets.delta.catalog import DELTA_CATALOG
from lakeinlet.incremental.targets.hudi.catalog import HUDI_CATALOG

pytestmark = pytest.mark.unit

REF = CatalogRef("glue", "sales", "orders")
SCHEMA = pa.schema([("id", pa.int64()), ("amount", pa.decimal128(10, 2)), ("day", pa.date32()),
                    ("region", pa.string())])
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def entry(fmt: str, schema: pa.Schema = SCHEMA, location: str = "s3://lake/orders",
          partition_by: tuple[str, ...] = ("day", "region")) -> TableEntry:
    # What each format's target says of itself (`Target.catalog_format`; Iceberg's: None).
    described = {"delta": DELTA_CATALOG, "hudi": HUDI_CATALOG}.get(fmt)
    return table_entry(described, fmt, location, schema, partition_by)


@pytest.fixture
def aws(in_process_aws: AwsSection) -> AwsSection:
    """moto in this process (not the shared moto server): every call in the test stays here."""
    return in_process_aws


@pytest.fixture
def registry(aws: AwsSection) -> GlueRegistry:
    return GlueRegistry(aws)


@pytest.fixture
def glue(aws: AwsSection) -> Any:
    """A second client on the same moto state, to look at (and tamper with) what was registered."""
    return client("glue", aws)


def stubbed(registry: GlueRegistry) -> Stubber:
    stub = Stubber(registry._glue)
    stub.activate()
    return stub


# --- names ---------------------------------------------------------------------------------------

def test_parse_catalog_lowercases_names_as_glue_stores_them() -> None:
    assert parse_catalog("glue:Sales.Orders") == CatalogRef("glue", "sales", "orders")
    assert parse_catalog("hive:db_1.t_2") == CatalogRef("hive", "db_1", "t_2")
    assert str(parse_catalog("glue:sales.orders")) == "glue:sales.orders"


@pytest.mark.parametrize("text", ["sales.orders", "iceberg:sales.orders", "glue:sales",
                                  "glue:sales.orders.v2", "glue:sales-eu.orders", "glue:.orders",
                                  "glue:sales.", "glue:säles.orders", ""])
def test_parse_catalog_rejects_other_forms_in_one_line_naming_the_value(text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_catalog(text)
    [problem] = caught.value.problems
    assert repr(text) in problem and "glue:DATABASE.TABLE" in problem and "\n" not in problem


# --- types ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("arrow", "hive"), [
    (pa.int8(), "tinyint"), (pa.int16(), "smallint"), (pa.int32(), "int"), (pa.int64(), "bigint"),
    (pa.float32(), "float"), (pa.float64(), "double"), (pa.bool_(), "boolean"), (pa.string(), "string"),
    (pa.large_string(), "string"), (pa.binary(), "binary"), (pa.date32(), "date"),
    (pa.timestamp("ms"), "timestamp"), (pa.timestamp("us", tz="UTC"), "timestamp"),
    (pa.decimal128(38, 9), "decimal(38,9)"), (pa.duration("s"), "string"), (pa.null(), "string"),
])
def test_hive_type_of_flat_types(arrow: pa.DataType, hive: str) -> None:
    assert hive_type(arrow) == hive


def test_hive_type_of_nested_types() -> None:
    item = pa.struct([("Name", pa.string()), ("tags", pa.map_(pa.string(), pa.int32()))])
    assert hive_type(pa.list_(item)) == "array<struct<name:string,tags:map<string,int>>>"
    assert hive_type(pa.large_list(pa.decimal128(5, 1))) == "array<decimal(5,1)>"
    assert hive_type(pa.map_(pa.string(), pa.list_(pa.timestamp("us")))) == "map<string,array<timestamp>>"


# --- what each format's entry holds --------------------------------------------------------------

def test_location_keeps_its_form_but_s3a_becomes_s3() -> None:
    moved = entry("delta", location="s3a://lake/orders").table_input("orders")["StorageDescriptor"]
    assert moved["Location"] == "s3://lake/orders" == moved["SerdeInfo"]["Parameters"]["path"]
    assert entry("hudi", location="/data/lake/orders").location == "/data/lake/orders"


def test_only_delta_and_hudi_tables_are_entries() -> None:
    with pytest.raises(ConfigError, match="expected a delta or hudi table, found iceberg"):
        entry("iceberg")


@pytest.mark.parametrize("fmt", ["delta", "hudi"])
def test_partition_columns_are_partition_keys_not_columns(fmt: str) -> None:
    table = entry(fmt).table_input("orders")
    assert table["PartitionKeys"] == [{"Name": "day", "Type": "date"}, {"Name": "region", "Type": "string"}]
    names = [c["Name"] for c in table["StorageDescriptor"]["Columns"]]
    assert "day" not in names and "region" not in names and names[-2:] == ["id", "amount"]


def test_delta_entry_is_what_trino_and_athena_recognise() -> None:
    table = entry("delta").table_input("orders")
    sd = table["StorageDescriptor"]
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["Parameters"] == {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta",
                                   "table_type": "DELTA"}
    assert sd["SerdeInfo"] == {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                               "Parameters": {"path": "s3://lake/orders"}}
    assert sd["InputFormat"] == "org.apache.hadoop.mapred.SequenceFileInputFormat"
    assert [c["Name"] for c in sd["Columns"]] == ["id", "amount"]


def test_hudi_entry_is_what_hudis_glue_sync_writes() -> None:
    table = entry("hudi").table_input("orders")
    sd = table["StorageDescriptor"]
    assert table["TableType"] == "EXTERNAL_TABLE"
    assert table["Parameters"] == {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi",
                                   "hudi.metadata-listing-enabled": "FALSE"}
    assert sd["InputFormat"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert sd["OutputFormat"] == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    assert sd["SerdeInfo"] == {
        "SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        "Parameters": {"serialization.format": "1", "hoodie.query.as.ro.table": "false",
                       "path": "s3://lake/orders"}}
    assert [c["Name"] for c in sd["Columns"]] == [*META, "id", "amount"]


def test_hudi_meta_columns_already_in_the_schema_are_not_repeated() -> None:
    schema = pa.schema([(name, pa.string()) for name in META] + [("id", pa.int64())])
    columns = entry("hudi", schema=schema, partition_by=()).table_input("t")["StorageDescriptor"]["Columns"]
    assert [c["Name"] for c in columns] == [*META, "id"]


# --- create, repair, partitions (moto) -----------------------------------------------------------

def test_sync_creates_then_leaves_alone_then_updates_a_grown_schema(registry: GlueRegistry,
                                                                   glue: Any) -> None:
    assert registry.sync(REF, entry("delta")) == "created"
    assert glue.get_database(Name="sales")["Database"]["Name"] == "sales"
    assert registry.sync(REF, entry("delta")) == "unchanged"

    grown = SCHEMA.append(pa.field("note", pa.string()))
    assert registry.sync(REF, entry("delta", schema=grown)) == "updated"
    columns = glue.get_table(DatabaseName="sales", Name="orders")["Table"]["StorageDescriptor"]["Columns"]
    assert {"Name": "note", "Type": "string"} in columns
    assert registry.sync(REF, entry("delta", schema=grown)) == "unchanged"


def test_registered_table_keeps_partition_columns_out_of_its_columns(registry: GlueRegistry,
                                                                    glue: Any) -> None:
    registry.sync(REF, entry("hudi"))
    table = glue.get_table(DatabaseName="sales", Name="orders")["Table"]
    assert [k["Name"] for k in table["PartitionKeys"]] == ["day", "region"]
    assert {"day", "region"}.isdisjoint(c["Name"] for c in table["StorageDescriptor"]["Columns"])


def test_sync_repairs_format_drift_and_keeps_parameters_others_added(registry: GlueRegistry,
                                                                    glue: Any) -> None:
    registry.sync(REF, entry("hudi"))
    table = entry("hudi").table_input("orders")
    table["Parameters"] = {"EXTERNAL": "TRUE", "last_commit_time_sync": "20240101000000000"}
    glue.update_table(DatabaseName="sales", TableInput=table)

    assert "format settings spark.sql.sources.provider" in str(registry.out_of_step(REF, entry("hudi")))
    assert registry.sync(REF, entry("hudi")) == "updated"
    parameters = glue.get_table(DatabaseName="sales", Name="orders")["Table"]["Parameters"]
    assert parameters["spark.sql.sources.provider"] == "hudi"
    assert parameters["last_commit_time_sync"] == "20240101000000000"


def test_add_partitions_registers_hive_style_folders_once(registry: GlueRegistry, glue: Any) -> None:
    registry.sync(REF, entry("hudi"))
    eu, us = {"day": "2024-01-01", "region": "eu"}, {"day": "2024-01-01", "region": "us"}
    assert registry.add_partitions(REF, entry("hudi"), [eu, us, eu]) == 2
    assert registry.add_partitions(REF, entry("hudi"), [eu, us]) == 0
    assert registry.add_partitions(REF, entry("hudi"), [us, {"day": "2024-01-02", "region": "eu"}]) == 1

    found = {tuple(p["Values"]): p["StorageDescriptor"]
             for p in glue.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]}
    assert len(found) == 3
    assert found[("2024-01-01", "eu")]["Location"] == "s3://lake/orders/day=2024-01-01/region=eu"
    assert found[("2024-01-01", "eu")]["InputFormat"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"


def test_add_partitions_sends_at_most_100_a_call(registry: GlueRegistry) -> None:
    registry.sync(REF, entry("hudi", partition_by=("id",)))
    sizes: list[int] = []
    registry._glue.meta.events.register(
        "provide-client-params.glue.BatchCreatePartition",
        lambda params, **_: sizes.append(len(params["PartitionInputList"])))
    assert registry.add_partitions(REF, entry("hudi", partition_by=("id",)),
                                   [{"id": str(i)} for i in range(250)]) == 250
    assert sizes == [100, 100, 50]


def test_delta_tables_get_no_partitions(registry: GlueRegistry, glue: Any) -> None:
    registry.sync(REF, entry("delta"))
    assert registry.add_partitions(REF, entry("delta"), [{"day": "2024-01-01", "region": "eu"}]) == 0
    assert glue.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"] == []


def test_out_of_step_says_what_differs(registry: GlueRegistry) -> None:
    assert registry.out_of_step(REF, entry("delta")) == "glue:sales.orders: no such table"
    registry.sync(REF, entry("delta"))
    assert registry.out_of_step(REF, entry("delta")) is None

    grown = SCHEMA.append(pa.field("note", pa.string()))
    assert registry.out_of_step(REF, entry("delta", schema=grown)) == (
        "glue:sales.orders: missing columns note")
    moved = str(registry.out_of_step(REF, entry("delta", location="s3://lake/orders_v2")))
    assert "location s3://lake/orders (expected s3://lake/orders_v2)" in moved
    assert registry.out_of_step(REF, entry("delta", partition_by=("day",))) == (
        "glue:sales.orders: missing columns region; "
        "partition keys (day date, region string) (expected (day date))")
    narrower = pa.schema([("id", pa.int32()), ("day", pa.date32()), ("region", pa.string())])
    assert registry.out_of_step(REF, entry("delta", schema=narrower)) == (
        "glue:sales.orders: extra columns amount; column types id bigint (expected int)")


# --- errors --------------------------------------------------------------------------------------

def test_access_denied_names_the_permission(registry: GlueRegistry) -> None:
    stub = stubbed(registry)
    stub.add_client_error("get_table", "AccessDeniedException", "User: x is not\nauthorized")
    line = "glue:GetTable on glue:sales.orders denied: User: x is not authorized"
    with pytest.raises(TerminalError, match=f"^{re.escape(line)}$"):
        registry.sync(REF, entry("delta"))


def test_access_denied_on_create_names_create_table(registry: GlueRegistry) -> None:
    stub = stubbed(registry)
    stub.add_client_error("get_table", "EntityNotFoundException")
    stub.add_response("get_database", {"Database": {"Name": "sales"}})
    stub.add_client_error("create_table", "AccessDeniedException", "denied")
    with pytest.raises(TerminalError, match=re.escape("glue:CreateTable on glue:sales.orders denied")):
        registry.sync(REF, entry("delta"))


def test_other_glue_errors_pass_through(registry: GlueRegistry) -> None:
    stubbed(registry).add_client_error("get_table", "InvalidInputException", "bad")
    with pytest.raises(ClientError) as caught:
        registry.out_of_step(REF, entry("delta"))
    assert caught.value.response["Error"]["Code"] == "InvalidInputException"


@pytest.mark.parametrize(("code", "error"), [("InvalidInputException", TerminalError),
                                             ("InternalServiceException", TransientError)])
def test_partitions_glue_refused_are_errors(registry: GlueRegistry, code: str,
                                            error: type[Exception]) -> None:
    stubbed(registry).add_response("batch_create_partition", {"Errors": [
        {"PartitionValues": ["1"], "ErrorDetail": {"ErrorCode": "AlreadyExistsException"}},
        {"PartitionValues": ["2"], "ErrorDetail": {"ErrorCode": code, "ErrorMessage": "no"}}]})
    with pytest.raises(error, match=re.escape(f"glue:BatchCreatePartition on glue:sales.orders: {code}: no")):
        registry.add_partitions(REF, entry("hudi", partition_by=("id",)), [{"id": "1"}, {"id": "2"}])


def test_hive_catalogs_are_not_written_to_glue(registry: GlueRegistry) -> None:
    with pytest.raises(ConfigError, match=re.escape("hive:sales.orders: this registry writes to Glue")):
        registry.sync(CatalogRef("hive", "sales", "orders"), entry("delta"))


@pytest.mark.parametrize(("catalog", "fmt", "problem"), [
    ("glue:sales.orders", "delta", None),
    ("glue:sales.orders", "hudi", None),
    ("hive:sales.orders", "delta", "give the metastore with --hive-metastore-uris"),
    ("glue:sales.orders", "iceberg", "an Iceberg table lives in its own catalog"),
    ("glue:orders", "delta", "expected glue:DATABASE.TABLE"),
])
def test_the_catalog_setting_says_what_registration_supports(catalog: str, fmt: str,
                                                             problem: str | None) -> None:
    from lakeinlet.incremental.registry import check_catalog

    found = check_catalog(catalog, fmt, None)
    assert (found == []) if problem is None else (len(found) == 1 and problem in found[0])
