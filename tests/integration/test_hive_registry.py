"""HiveRegistry against a real Hive Metastore (Hive 2.3 from pyspark's jars, Derby, on 127.0.0.1),
and Spark finding a registered Delta table by name through that metastore."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from pymetastore.hive_metastore import ThriftHiveMetastore
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TSocket import TSocket
from thrift.transport.TTransport import TBufferedTransport

from lakeinlet import jars as jarlib
from lakeinlet.dev.emulator import free_port
from lakeinlet.dev.metastore import HiveMetastore
from lakeinlet.errors import TerminalError, TransientError
from lakeinlet.incremental.registry import parse_catalog
from lakeinlet.incremental.registry.entry import TableEntry
from lakeinlet.incremental.registry.hive import HiveRegistry
from lakeinlet.incremental.targets import DELTA_SESSION
from lakeinlet.incremental.targets.delta.catalog import DELTA_CATALOG
from lakeinlet.incremental.targets.hudi.catalog import HUDI_CATALOG

pytestmark = [pytest.mark.integration]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("day", pa.string())])


@pytest.fixture(scope="module")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastore]:
    """One metastore for the module; tests keep apart by database name."""
    with HiveMetastore(tmp_path_factory.mktemp("metastore")) as server:
        yield server


@pytest.fixture
def registry(metastore: HiveMetastore) -> HiveRegistry:
    return HiveRegistry(metastore.uris)


@contextmanager
def thrift_client(uris: str) -> Iterator[Any]:
    """A plain client, to read what the registry stored."""
    where = urlsplit(uris)
    transport = TBufferedTransport(TSocket(where.hostname, where.port))
    transport.open()
    try:
        yield ThriftHiveMetastore.Client(TBinaryProtocol(transport))
    finally:
        transport.close()


def test_a_delta_table_is_created_then_unchanged_then_updated(
        registry: HiveRegistry, metastore: HiveMetastore, tmp_path: Path) -> None:
    ref = parse_catalog("hive:delta_db.orders")
    entry = TableEntry(DELTA_CATALOG, str(tmp_path / "orders"), SCHEMA, ("day",))
    assert registry.sync(ref, entry) == "created"
    assert registry.sync(ref, entry) == "unchanged"
    wider = TableEntry(DELTA_CATALOG, entry.location, SCHEMA.append(pa.field("amount", pa.float64())),
                       ("day",))
    assert registry.sync(ref, wider) == "updated"
    assert registry.sync(ref, wider) == "unchanged"

    with thrift_client(metastore.uris) as hms:
        table = hms.get_table("delta_db", "orders")
    location = f"file:{tmp_path / 'orders'}"  # a local folder is stored in Hadoop's form
    assert table.tableType == "EXTERNAL_TABLE"
    assert table.sd.location == location
    assert {k: table.parameters[k] for k in ("EXTERNAL", "spark.sql.sources.provider", "table_type")} == {
        "EXTERNAL": "TRUE", "spark.sql.sources.provider": "delta", "table_type": "DELTA"}
    assert "numFiles" not in table.parameters  # the metastore was told not to list the folder
    assert [(c.name, c.type) for c in table.sd.cols] == [("id", "bigint"), ("name", "string"),
                                                          ("amount", "double")]
    assert [(c.name, c.type) for c in table.partitionKeys] == [("day", "string")]
    assert table.sd.inputFormat == "org.apache.hadoop.mapred.SequenceFileInputFormat"
    assert table.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    assert table.sd.serdeInfo.parameters == {"path": location}


def test_a_hudi_table_is_stored_as_hudi_sync_writes_it_and_keeps_other_writers_parameters(
        registry: HiveRegistry, metastore: HiveMetastore, tmp_path: Path) -> None:
    ref = parse_catalog("hive:hudi_db.events")
    entry = TableEntry(HUDI_CATALOG, f"file://{tmp_path}/events/", SCHEMA, ("day",))
    assert registry.sync(ref, entry) == "created"
    assert registry.sync(ref, entry) == "unchanged"
    with thrift_client(metastore.uris) as hms:  # as Hudi's own sync records its last commit
        table = hms.get_table("hudi_db", "events")
        table.parameters["last_commit_time_sync"] = "20260101000000000"
        hms.alter_table("hudi_db", "events", table)
    wider = TableEntry(HUDI_CATALOG, entry.location, SCHEMA.append(pa.field("amount", pa.float64())),
                       ("day",))
    assert registry.sync(ref, wider) == "updated"

    with thrift_client(metastore.uris) as hms:
        table = hms.get_table("hudi_db", "events")
    assert table.sd.location == f"file:{tmp_path}/events"
    assert table.parameters["last_commit_time_sync"] == "20260101000000000"
    assert table.parameters["spark.sql.sources.provider"] == "hudi"
    assert table.parameters["hudi.metadata-listing-enabled"] == "FALSE"
    assert [c.name for c in table.sd.cols][:2] == ["_hoodie_commit_time", "_hoodie_commit_seqno"]
    assert table.sd.cols[-1].name == "amount"
    assert table.sd.inputFormat == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert table.sd.serdeInfo.serializationLib.endswith(".parquet.serde.ParquetHiveSerDe")
    assert table.sd.serdeInfo.parameters == {"serialization.format": "1", "hoodie.query.as.ro.table": "false",
                                             "path": f"file:{tmp_path}/events"}


def test_hudi_partitions_are_added_once_and_delta_ones_never(
        registry: HiveRegistry, metastore: HiveMetastore, tmp_path: Path) -> None:
    ref = parse_catalog("hive:parts_db.events")
    entry = TableEntry(HUDI_CATALOG, str(tmp_path / "events"), SCHEMA, ("day",))
    registry.sync(ref, entry)
    assert registry.add_partitions(ref, entry, [{"day": "1"}, {"day": "2"}, {"day": "1"}]) == 2
    assert registry.add_partitions(ref, entry, [{"day": "1"}, {"day": "2"}]) == 0
    assert registry.add_partitions(ref, entry, [{"day": "2"}, {"day": "3"}]) == 1
    assert registry.add_partitions(ref, entry, []) == 0
    with thrift_client(metastore.uris) as hms:
        parts = hms.get_partitions("parts_db", "events", -1)
    assert sorted((p.values[0], p.sd.location) for p in parts) == [
        (d, f"file:{tmp_path}/events/day={d}") for d in ("1", "2", "3")]

    delta = parse_catalog("hive:parts_db.orders")
    assert registry.add_partitions(delta, TableEntry(DELTA_CATALOG, str(tmp_path / "o"), SCHEMA, ("day",)),
                                   [{"day": "1"}]) == 0


def test_out_of_step_says_how_the_table_differs(registry: HiveRegistry, tmp_path: Path) -> None:
    ref = parse_catalog("hive:drift_db.orders")
    entry = TableEntry(DELTA_CATALOG, str(tmp_path / "orders"), SCHEMA)
    assert registry.out_of_step(ref, entry) == "hive:drift_db.orders: no such table"
    registry.sync(ref, entry)
    assert registry.out_of_step(ref, entry) is None
    moved = TableEntry(DELTA_CATALOG, str(tmp_path / "elsewhere"), SCHEMA.append(pa.field("x", pa.int32())))
    assert registry.out_of_step(ref, moved) == (
        f"hive:drift_db.orders: missing columns x; location file:{tmp_path}/orders "
        f"(expected file:{tmp_path}/elsewhere); format settings serde path")


def test_an_unreachable_metastore_is_a_transient_error_naming_it(tmp_path: Path) -> None:
    uris = f"thrift://127.0.0.1:{free_port()}"
    with pytest.raises(TransientError, match=re.escape(f"unreachable for hive:db.t: {uris} (")) as caught:
        HiveRegistry(uris).sync(parse_catalog("hive:db.t"), TableEntry(DELTA_CATALOG, str(tmp_path), SCHEMA))
    assert "\n" not in str(caught.value)


def test_a_metastore_refusal_is_a_terminal_error_in_one_line(registry: HiveRegistry) -> None:
    # This metastore has no S3 file system: it cannot check the folder, so it refuses the table.
    entry = TableEntry(DELTA_CATALOG, "s3://bucket/orders", SCHEMA)
    with pytest.raises(TerminalError, match=r"on hive:s3_db\.orders: MetaException: .*s3") as caught:
        registry.sync(parse_catalog("hive:s3_db.orders"), entry)
    assert "\n" not in str(caught.value)


# Spark in its own process (this one may hold another session): it knows the table only by name.
SPARK = textwrap.dedent("""
    import json, sys
    from pyspark.sql import SparkSession

    uris, warehouse, jars, conf, name = sys.argv[1:]
    builder = (SparkSession.builder.master("local[1]").appName("hive-registry")
               .config("spark.sql.catalogImplementation", "hive")
               .config("spark.hadoop.hive.metastore.uris", uris)
               .config("spark.sql.warehouse.dir", warehouse).config("spark.ui.enabled", "false")
               .config("spark.jars", jars))
    for key, value in json.loads(conf).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    database = name.split(".")[0]
    described = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()}
    print(json.dumps({"tables": [r.tableName for r in spark.sql(f"SHOW TABLES IN {database}").collect()],
                      "type": spark.catalog.getTable(name).tableType,
                      "provider": described.get("Provider"), "location": described.get("Location"),
                      "rows": spark.table(name).count(),
                      "day_2": spark.sql(f"SELECT count(*) FROM {name} WHERE day = '2'").first()[0]}))
""")


def test_spark_finds_a_registered_delta_table_by_name_and_reads_it(
        registry: HiveRegistry, metastore: HiveMetastore, tmp_path: Path) -> None:
    location = tmp_path / "orders"
    data = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"], "day": ["1", "2", "2"]}, schema=SCHEMA)
    write_deltalake(str(location), data, partition_by=["day"])
    assert registry.sync(parse_catalog("hive:lake.orders"), TableEntry(DELTA_CATALOG, str(location), SCHEMA,
                                                                       ("day",))) == "created"

    delta_jars = jarlib.fetch(jarlib.default_dir(), "delta-spark")
    done = subprocess.run(
        [sys.executable, "-c", SPARK, metastore.uris, str(tmp_path / "warehouse"),
         ",".join(map(str, delta_jars)), json.dumps(DELTA_SESSION), "lake.orders"],
        capture_output=True, text=True, timeout=300,
        env=os.environ | {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    print(found)
    assert found == {"tables": ["orders"], "type": "EXTERNAL", "provider": "delta",
                     "location": f"file:{location}", "rows": 3, "day_2": 2}
