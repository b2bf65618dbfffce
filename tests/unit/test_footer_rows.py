"""Rows read against the footer read with an object's HEAD: more rows than it holds means Spark
read another version of the object."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakeinlet.incremental.model import FILTERED, PlannedObject
from lakeinlet.incremental.ports import Footer
from lakeinlet.incremental.read.checks import Seen, beyond_footer

pytestmark = pytest.mark.unit


def _obj(key: str) -> PlannedObject:
    return PlannedObject("b", key, "e", None, 10, key, datetime(2026, 1, 1, tzinfo=UTC), 0)


def test_more_rows_than_the_footer_is_another_version_and_never_loaded() -> None:
    objs = [_obj(k) for k in ("more", "same", "fewer", "no-footer")]
    seen = {("b", k): Seen(rows, 0, None, None) for k, rows in
            (("more", 10), ("same", 3), ("fewer", 1), ("no-footer", 99))}
    footers = {("b", k): Footer(3, None) for k in ("more", "same", "fewer")}
    failed = beyond_footer(objs, seen, footers)
    assert list(failed) == [("b", "more")]  # fewer rows: a corrupt row group, named elsewhere
    status, why = failed[("b", "more")]
    assert status == FILTERED and "overwritten during the load" in why and "10 rows" in why
