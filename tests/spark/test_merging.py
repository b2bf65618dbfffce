"""`merging.newer_rows`, the rows a copy-on-write merge writes in place of the files it rewrites: per
changed key the newer of row and change; every other row as it was, as MERGE INTO leaves it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from lakeinlet.incremental.merge_settings import Merge
from lakeinlet.incremental.targets.merging import DELETE, newer_rows

pytestmark = pytest.mark.spark

MERGE = Merge(("id",), "ts")
TABLE = "id INT, ts TIMESTAMP, name STRING"


def t(minute: int) -> datetime:
    return datetime(2026, 11, 28, 10, minute)


def merged(spark: Any, table: list[tuple[Any, ...]], changes: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    rows = spark.createDataFrame(table, TABLE)
    change_rows = spark.createDataFrame(changes, f"{TABLE}, {DELETE} BOOLEAN")
    return sorted((tuple(r) for r in newer_rows(rows, change_rows, MERGE).collect()),
                  key=lambda r: (r[0] is not None, r[0] or 0, r[2]))


def test_rows_of_keys_no_change_carries_stay_as_they_are_duplicates_and_null_keys_too(spark: Any) -> None:
    table = [(1, t(0), "a"), (5, t(0), "x"), (5, t(1), "y"), (None, t(0), "no key"), (None, t(0), "no key")]
    assert merged(spark, table, [(1, t(2), "b", False)]) == [
        (None, t(0), "no key"), (None, t(0), "no key"), (1, t(2), "b"), (5, t(0), "x"), (5, t(1), "y")]


def test_per_changed_key_the_newer_of_row_and_change_wins_and_a_delete_drops_it(spark: Any) -> None:
    table = [(1, t(5), "row 1"), (2, t(5), "row 2"), (3, t(5), "row 3"), (4, None, "row 4")]
    changes = [(1, t(4), "older change", False), (2, t(5), "tie", False), (3, t(6), "", True),
               (4, t(0), "over a null", False), (9, t(0), "new", False)]
    assert merged(spark, table, changes) == [
        (1, t(5), "row 1"), (2, t(5), "tie"), (4, t(0), "over a null"), (9, t(0), "new")]
