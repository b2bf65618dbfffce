"""The types a table's first batch takes when its objects disagree: the majority, widenings counted."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

from lakeinlet.incremental.read.checks import agreed_types

pytestmark = pytest.mark.unit


def test_agreed_types_take_the_majority_with_widenings_and_ties_to_the_earliest() -> None:
    long, double, text = T.LongType(), T.DoubleType(), T.StringType()
    assert agreed_types([{"id": long}, {"id": long, "p": double}, {"id": text}]) == {"id": long, "p": double}
    assert agreed_types([{"x": long}, {"x": double}]) == {"x": double}  # a bigint loads into double
    assert agreed_types([{"x": text}, {"x": long}]) == {"x": text}  # a tie: the earliest object's
    assert agreed_types([{"x": long}, {"x": text}, {"x": text}]) == {"x": text}
