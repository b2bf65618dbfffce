"""Partition values in keys (`key_values`): which folders give columns, their names and values
(Hive-unescaped, nulls), below the prefix's folder only, and what --partition-columns selects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read.key_values import found, values, wanted

pytestmark = pytest.mark.unit

VPC = ("AWSLogs/aws-account-id=123456789012/aws-service=vpcflowlogs/aws-region=eu-west-1/"
       "year=2026/month=11/day=27/hour=09/123456789012_vpcflowlogs_eu-west-1_fl-1_20261127T0900Z_h.parquet")


def obj(key: str) -> PlannedObject:
    return PlannedObject("land", key, "e", None, 1, "ev", datetime(2026, 11, 27, tzinfo=UTC), 0)


def test_folders_below_the_prefix_folder_give_columns_the_file_name_never() -> None:
    assert values("sales/dt=2026-11-27/region=eu/x=1.parquet") == {"dt": "2026-11-27", "region": "eu"}
    assert values("topics/orders/partition=3/orders+3+0000000042.json.gz", ("topics/orders/",)) == {
        "partition": "3"}
    assert values(VPC, ("AWSLogs/",)) == {
        "aws-account-id": "123456789012", "aws-service": "vpcflowlogs", "aws-region": "eu-west-1",
        "year": "2026", "month": "11", "day": "27", "hour": "09"}
    # the prefix's own folder and above are not below it: `--prefix sales/dt=2026-11-27/` gives none
    assert values("sales/dt=2026-11-27/x.parquet", ("sales/dt=2026-11-27/",)) == {}
    # a partial prefix stops at its folder: the folder it names in part is below it
    assert values("sales/dt=2026-11-27/x.parquet", ("sales/dt=2026",)) == {"dt": "2026-11-27"}


def test_values_are_hive_unescaped_strings_and_nulls() -> None:
    got = values("t/city=S%C3%A3o%20Paulo/a%3Db=c%2Fd/p=1+2/dt=__HIVE_DEFAULT_PARTITION__/e=/f==/x.json")
    assert got == {"city": "São Paulo", "a=b": "c/d", "p": "1+2", "dt": None, "e": None, "f": "="}
    # a name twice (in any case): the first folder's value, spelled as first found
    assert values("t/Dt=1/dt=2/x.json") == {"Dt": "1"}
    assert values("t/=1/noeq/x.json") == {}


def test_partition_columns_setting_selects_columns() -> None:
    assert wanted("auto") is None and wanted("none") == () and wanted(" a , b ") == ("a", "b")
    objs = [obj("t/dt=1/region=eu/a.json"), obj("t/dt=2/b.json")]
    assert found(objs, (), "auto", None, False) == {
        "t/dt=1/region=eu/a.json": {"dt": "1", "region": "eu"}, "t/dt=2/b.json": {"dt": "2"}}
    assert found(objs, (), "none", None, False) == {}
    assert found(objs, (), "region,DT", None, False) == {
        "t/dt=1/region=eu/a.json": {"region": "eu", "DT": "1"}, "t/dt=2/b.json": {"region": None, "DT": "2"}}
    # --schema-mode strict on an existing table: only the columns it holds
    assert found(objs, (), "auto", {"DT": object()}, True) == {
        "t/dt=1/region=eu/a.json": {"dt": "1"}, "t/dt=2/b.json": {"dt": "2"}}


def test_partition_columns_is_a_route_key() -> None:
    from dataclasses import replace

    from lakeinlet.incremental.routes import RoutesSection, routes_of
    from lakeinlet.incremental.settings import LoaderConfig, TablesSection

    cfg = replace(LoaderConfig(), tables=TablesSection(changelog="c"), routes=RoutesSection(route_def=(
        "a: table=s3://l/a; prefix=x/; partition_columns=none", "b: table=s3://l/b; prefix=y/")))
    got = [(r.name, r.config.read.partition_columns) for r in routes_of(cfg)]
    assert got == [("a", "none"), ("b", "auto")]


def test_partition_columns_names_no_folder() -> None:
    from lakeinlet.incremental.settings import ReadSection

    assert ReadSection(partition_columns="dt,region").validate() == []
    assert ReadSection(partition_columns="dt=1").validate() == [
        "--partition-columns: expected auto, none or column names, found 'dt=1'"]
