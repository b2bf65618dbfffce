"""The driver's xxhash64 (which decides whether a batch's lineage join may be on path hashes)
is Spark's own, byte for byte: lengths across every branch of XXH64 (under 4, 4, 8 and 32-byte
lanes), multi-byte characters, the empty string."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyspark.sql import functions as F

from lakeinlet.incremental.read.lineage_hash import distinct_hashes, xxhash64

pytestmark = [pytest.mark.spark]


def test_xxhash64_is_sparks(spark: Any) -> None:
    rng = random.Random(7)
    strings = ["", "a", "s3a://land/in/a b.parquet"] + [
        "".join(rng.choice("abcü€/%[ 9") for _ in range(rng.randint(0, 130))) for _ in range(500)]
    theirs = [r[0] for r in spark.createDataFrame([(s,) for s in strings], "s string")
              .select(F.xxhash64("s")).collect()]
    assert [xxhash64(s.encode()) for s in strings] == theirs


def test_distinct_hashes_sees_a_repeated_path() -> None:
    assert distinct_hashes(["s3a://b/1", "s3a://b/2"])
    assert not distinct_hashes(["s3a://b/1", "s3a://b/1"])
