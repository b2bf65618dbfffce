"""Iceberg catalogs and the table they hold: a second catalog never forks a table another holds, and
a catalog several drivers share (Iceberg's REST catalog server, on loopback) loads exactly once,
from one driver and from two drivers at once."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.dev.emulator import MotoServer
from lakeinlet.dev.samples import SCHEMA_DDL, SampleFile, make_files
from lakeinlet.errors import TerminalError
from lakeinlet.incremental.settings import LoaderConfig
from lakeinlet.incremental.targets.iceberg.catalog import IcebergSection
from lakeinlet.incremental.targets.iceberg.creation import metadata_files
from tests.catalogs import RestCatalogServer
from tests.spark.conftest import ICEBERG_URI_ENV, JARS
from tests.spark.loader_helpers import (
    finish_racing,
    ledger_rows,
    make_config,
    new_lake,
    parts,
    record,
    target_rows,
    upload,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration]


@pytest.fixture(scope="module")
def rest_catalog(moto_server: MotoServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Iceberg's REST catalog test server for this module; its URL."""
    root = tmp_path_factory.mktemp("rest-catalog")
    with RestCatalogServer(root, moto_server.endpoint, Path(JARS)) as server:
        yield server.endpoint


def iceberg(config: LoaderConfig, **section: Any) -> LoaderConfig:
    return replace(config, iceberg=IcebergSection(**section))


def order_ids(files: list[SampleFile]) -> list[int]:
    return sorted(r["order_id"] for f in files for r in f.rows)


def test_a_second_catalog_refuses_a_location_another_catalog_holds(spark: Any, aws: AwsSection,
                                                                    tmp_path: Path) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 3, 2)
    base = make_config(aws, lake, target_format="iceberg")
    first = parts(iceberg(base, iceberg_catalog_uri=f"jdbc:sqlite:{tmp_path / 'a.db'}",
                          iceberg_catalog_name="fork_a"), spark)
    record(first.changelog, upload(s3, landing, files[:2]))
    first.loader().drain()
    chain = metadata_files(first.target.uri, first.target.catalog)
    record(first.changelog, upload(s3, landing, files[2:]))
    second = parts(iceberg(base, iceberg_catalog_uri=f"jdbc:sqlite:{tmp_path / 'b.db'}",
                           iceberg_catalog_name="fork_b"), spark)
    with pytest.raises(TerminalError, match=r"already holds an Iceberg table .* does not know"):
        second.loader().drain()
    assert second.target.table() is None  # catalog b made no table of its own
    assert metadata_files(first.target.uri, first.target.catalog) == chain  # one chain, untouched
    assert sorted(target_rows(first).column("order_id").to_pylist()) == order_ids(files[:2])
    first.loader().drain()  # the catalog that holds the table goes on from its checkpoint
    assert sorted(target_rows(first).column("order_id").to_pylist()) == order_ids(files)
    assert Counter(r["key"] for r in ledger_rows(first)) == {f.key: 1 for f in files}


def test_the_rest_catalog_loads_exactly_once(spark: Any, aws: AwsSection, rest_catalog: str) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("json", 3, 2)
    config = iceberg(make_config(aws, lake, "json", target_format="iceberg"), iceberg_catalog="rest",
                     iceberg_catalog_uri=rest_catalog, iceberg_catalog_name="rest_once")
    p = parts(config, spark)
    events = upload(s3, landing, files)
    record(p.changelog, events[:2])
    record(p.changelog, events[1:])  # a duplicate notification in a later commit
    p.loader().drain()
    p.loader().drain()  # nothing new: no second copy
    assert sorted(target_rows(p).column("order_id").to_pylist()) == order_ids(files)
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}
    assert spark.table(p.target.catalog.spark_name).count() == len(order_ids(files))


def _loader(lake: str, aws: AwsSection, catalog: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "lakeinlet.incremental.job", "run", "--drain", "--max-files", "1",
           "--changelog", f"s3a://{lake}/changelog", "--table", f"s3a://{lake}/orders",
           "--target-format", "iceberg", "--iceberg-catalog", "rest", "--iceberg-catalog-uri", catalog,
           "--schema", SCHEMA_DDL, "--endpoint-url", aws.endpoint_url or "", "--master", "local[1]",
           "--log-format", "json"]
    env = {k: v for k, v in os.environ.items() if k != ICEBERG_URI_ENV}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env | {"PYSPARK_PYTHON": sys.executable})


def test_two_drivers_share_the_rest_catalog_and_load_each_object_once(aws: AwsSection, rest_catalog: str,
                                                                     tmp_path: Path) -> None:
    landing, lake, s3 = new_lake(aws)
    files = make_files("parquet", 5, 2)
    p = parts(iceberg(make_config(aws, lake, target_format="iceberg"), iceberg_catalog="rest",
                      iceberg_catalog_uri=rest_catalog, iceberg_catalog_name="rest_two"), None)
    for f in files:
        record(p.changelog, upload(s3, landing, [f]))  # one changelog version each: batches to race on
    loaders = [_loader(lake, aws, rest_catalog) for _ in range(2)]
    seen = finish_racing(loaders, tmp_path, timeout=600)
    assert sum(s["batch"] for s in seen) == len(files), seen  # every batch committed once
    assert all(s["batch"] + s["conflict"] >= 1 for s in seen), seen  # both drivers took part
    assert sorted(target_rows(p).column("order_id").to_pylist()) == order_ids(files)
    assert Counter(r["key"] for r in ledger_rows(p)) == {f.key: 1 for f in files}
