"""A table's location resolved once (`storage.TableLocation`): the forms each engine speaks, and the
tables beside it, as every adapter derived them by hand before."""

from __future__ import annotations

import os

import pytest

from lakeinlet.aws import AwsSection
from lakeinlet.storage import TableLocation

pytestmark = pytest.mark.unit


def test_an_s3a_table_in_each_engines_form_and_its_siblings() -> None:
    table = TableLocation("s3a://lake/orders/", "s3")
    assert (table.uri, table.spark) == ("s3://lake/orders/", "s3://lake/orders")
    assert TableLocation("s3://lake/orders").spark == "s3a://lake/orders"  # hadoop-aws by default
    ledger = table.sibling("_ledger")
    assert (ledger.uri, ledger.spark, ledger.spark_scheme) == ("s3://lake/orders_ledger", "s3://lake/orders_ledger",
                                                               "s3")
    assert table.resolved() == table  # nothing local to make absolute
    assert (table.options(AwsSection()) or {})["aws_conditional_put"] == "etag"


def test_a_relative_local_table_stays_as_given_until_resolved() -> None:
    table = TableLocation("lake/orders")
    assert (table.uri, table.spark, table.options(AwsSection())) == ("lake/orders", "lake/orders", None)
    lease = table.resolved().sibling(".lakeinlet-writer")
    assert lease.uri == os.path.abspath("lake/orders") + ".lakeinlet-writer"
    assert TableLocation.of(table) is table and TableLocation.of("lake/orders") == table
