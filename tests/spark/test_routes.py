"""Routes end to end: five tables over three formats and three source formats from one changelog
in one `lakeinlet-load run`, an unrouted object, a route that fails mid-run while the others
commit, a lost catalog entry, then a rerun: every table exact, read by another engine, and the Delta
and Hudi tables found by name through the Glue catalog."""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog import load_catalog

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.metastore import HiveMetastore
from lakeinlet.dev.samples import SCHEMA_DDL, make_files
from lakeinlet.incremental.job import main
from lakeinlet.incremental.registry import parse_catalog
from lakeinlet.incremental.registry.entry import TableEntry
from lakeinlet.incremental.registry.hive import HiveRegistry
from lakeinlet.incremental.routes import RoutesSection, routes_of
from lakeinlet.incremental.settings import LoaderConfig, TablesSection
from lakeinlet.incremental.targets.hudi.catalog import HUDI_CATALOG
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from tests.spark.conftest import ICEBERG_URI_ENV
from tests.spark.loader_helpers import ledger_rows, make_config, new_lake, parts, put, record, target_rows

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.hudi]


def routes_file(tmp_path: Path, lake: str) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(f"""
[[route]]
name = "orders"
table = "s3a://{lake}/orders"
prefix = ["parquet/orders/"]
catalog = "glue:{lake.replace('-', '_')}.orders"

[[route]]
name = "events"
table = "s3a://{lake}/events"
source_format = "json"
prefix = ["json/"]

[[route]]
name = "clicks"
table = "s3a://{lake}/clicks"
target_format = "hudi"
source_format = "csv"
read_option = ["header=true"]
prefix = ["csv/"]
partition_by = ["customer"]
catalog = "glue:{lake.replace('-', '_')}.clicks"

[[route]]
name = "trips"
table = "s3a://{lake}/trips"
target_format = "iceberg"
prefix = ["parquet/trips/"]

[[route]]
name = "strict"
table = "s3a://{lake}/strict"
prefix = ["typed/"]
schema = ""
on_type_conflict = "fail"
""")
    return path


def parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def ids(p: Any) -> Counter[int]:
    return Counter(target_rows(p).column("order_id").to_pylist())


def test_five_routes_load_exactly_once_and_a_failing_route_blocks_none(
        spark: Any, aws: AwsSection, tmp_path: Path, capsys: Any) -> None:
    landing, lake, s3 = new_lake(aws)
    path = routes_file(tmp_path, lake)
    files = {"orders": make_files("parquet", 3, 2, prefix="parquet/orders/"),
             "events": make_files("json", 2, 2, start=10),
             "clicks": make_files("csv", 2, 2, start=20),
             "trips": make_files("parquet", 2, 2, prefix="parquet/trips/", start=30)}
    typed = [parquet(pa.table({"order_id": pa.array([40_000_000], pa.int64())})),
             parquet(pa.table({"order_id": pa.array(["not a number"])}))]  # a type conflict
    changelog = parts(make_config(aws, lake), spark).changelog
    first = [put(s3, landing, f.key, f.body) for fs in files.values() for f in fs[:1]]
    record(changelog, [*first, put(s3, landing, "typed/0.parquet", typed[0]),
                       put(s3, landing, "other/readme.txt", b"no route wants this")])
    record(changelog, [put(s3, landing, f.key, f.body) for fs in files.values() for f in fs[1:]]
           + [put(s3, landing, "typed/1.parquet", typed[1])])
    flags = ["--changelog", f"s3a://{lake}/changelog", "--routes", str(path), "--schema", SCHEMA_DDL,
             "--endpoint-url", aws.endpoint_url or "", "--master", "local[2]", "--max-files", "3"]

    assert main(["run", "--drain", *flags]) == 3
    out = capsys.readouterr()
    assert "route strict: loaded 1 rows in 1 batches" in out.out and "failed:" in out.out
    assert "routes failed: strict" in out.err
    config = LoaderConfig(tables=TablesSection(changelog=f"s3a://{lake}/changelog"), aws=aws,
                          iceberg=IcebergSection(iceberg_catalog_uri=os.environ[ICEBERG_URI_ENV]),
                          routes=RoutesSection(routes=str(path)))
    routed = {r.name: parts(r.config, spark) for r in routes_of(config)}
    for name, fs in files.items():
        want = Counter(r["order_id"] for f in fs for r in f.rows)
        assert ids(routed[name]) == want, name
        assert {o["key"] for o in ledger_rows(routed[name])} == {f.key for f in fs}, name
    assert ids(routed["strict"]) == Counter([40_000_000])

    path.write_text(path.read_text().replace('"fail"', '"quarantine"'))  # the operator's fix
    assert main(["run", "--drain", *flags, "--route", "strict"]) == 0
    assert ids(routed["strict"]) == Counter([40_000_000])
    assert Counter(o["status"] for o in ledger_rows(routed["strict"])) == {"loaded": 1, "schema_conflict": 1}
    assert main(["run", "--drain", *flags]) == 0  # a rerun changes nothing
    for name, fs in files.items():
        assert ids(routed[name]) == Counter(r["order_id"] for f in fs for r in f.rows), name
    glue, db = client("glue", aws), lake.replace("-", "_")
    for name, fmt in (("orders", "delta"), ("clicks", "hudi")):
        found = glue.get_table(DatabaseName=db, Name=name)["Table"]
        assert found["Parameters"]["spark.sql.sources.provider"] == fmt
        by_name = parts(make_config(aws, lake, target_format=fmt, table=found["StorageDescriptor"][
            "Location"].replace("s3://", "s3a://")), spark)
        assert ids(by_name) == Counter(r["order_id"] for f in files[name] for r in f.rows), name
    customers = {r["customer"] for f in files["clicks"] for r in f.rows}
    partitions = glue.get_partitions(DatabaseName=db, TableName="clicks")["Partitions"]
    assert {p["Values"][0] for p in partitions} == customers

    glue.delete_table(DatabaseName=db, Name="orders")  # as if the run died between commit and registration
    assert main(["status", "--route", "orders", *flags]) == 0
    assert f"OUT OF STEP: glue:{db}.orders: no such table (the next run" in capsys.readouterr().out
    assert main(["run", "--drain", *flags]) == 0
    assert main(["status", "--route", "orders", *flags]) == 0
    assert f"glue:{db}.orders in step with the table" in capsys.readouterr().out
    capsys.readouterr()
    assert main(["checkpoint", "show", "--json", *flags]) == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(s["route"], s["checkpoint"], s["lag_events"]) for s in shown] == [
        (name, "1", 0) for name in ("orders", "events", "clicks", "trips", "strict")]
    assert main(["vacuum", "--dry-run", "--route", "orders,clicks", *flags]) == 0
    out = capsys.readouterr().out
    assert out.count("== route ") == 2 and "== route clicks ==" in out and "trips" not in out
    unrouted = ledger_rows(parts(make_config(aws, lake, table=f"s3a://{lake}/changelog_unrouted"), spark))
    assert [(o["key"], o["status"]) for o in unrouted] == [("other/readme.txt", "unrouted")]


def test_routes_register_their_tables_in_a_hive_metastore(
        spark: Any, aws: AwsSection, tmp_path: Path, capsys: Any) -> None:
    landing, _, s3 = new_lake(aws)
    orders, clicks = make_files("parquet", 2, 2, prefix="orders/"), make_files("csv", 2, 3, start=5)
    trips = make_files("parquet", 2, 2, prefix="trips/", start=9)
    changelog = tmp_path / "changelog"
    record(DeltaChangelog(str(changelog), aws),
           [put(s3, landing, f.key, f.body) for f in [*orders, *clicks, *trips]])
    routes = tmp_path / "routes.toml"
    with HiveMetastore(tmp_path / "metastore") as metastore:
        routes.write_text(
            f'[[route]]\nname = "orders"\ntable = "{tmp_path}/orders"\nprefix = ["orders/"]\n'
            'catalog = "hive:shop.orders"\n\n'
            f'[[route]]\nname = "clicks"\ntable = "{tmp_path}/clicks"\ntarget_format = "hudi"\n'
            'source_format = "csv"\nread_option = ["header=true"]\nprefix = ["csv/"]\n'
            'partition_by = ["customer"]\ncatalog = "hive:shop.clicks"\n\n'
            f'[[route]]\nname = "trips"\ntable = "{tmp_path}/trips"\ntarget_format = "iceberg"\n'
            f'prefix = ["trips/"]\niceberg_catalog = "hive"\niceberg_catalog_uri = "{metastore.uris}"\n'
            'iceberg_catalog_name = "hms"\niceberg_table = "shop.trips"\n')
        flags = ["--changelog", str(changelog), "--routes", str(routes), "--schema", SCHEMA_DDL,
                 "--endpoint-url", aws.endpoint_url or "", "--master", "local[2]",
                 "--hive-metastore-uris", metastore.uris]
        assert main(["run", "--drain", *flags]) == 0
        capsys.readouterr()
        assert main(["status", *flags]) == 0
        out = capsys.readouterr().out
        assert "hive:shop.orders in step" in out and "hive:shop.clicks in step" in out
        registry = HiveRegistry(metastore.uris)
        entry = TableEntry(HUDI_CATALOG, str(tmp_path / "clicks"), pa.schema([("customer", pa.string())]),
                           ("customer",))
        customers = [{"customer": c} for c in sorted({r["customer"] for f in clicks for r in f.rows})]
        assert registry.add_partitions(parse_catalog("hive:shop.clicks"), entry, customers) == 0  # all there
        want = Counter(r["order_id"] for f in trips for r in f.rows)
        by_name = load_catalog("hms", type="hive", uri=metastore.uris).load_table("shop.trips")
        assert Counter(by_name.scan().to_arrow().column("order_id").to_pylist()) == want
        assert Counter(r.order_id for r in spark.table("hms.shop.trips").collect()) == want
