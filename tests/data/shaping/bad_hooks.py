"""Transform hooks that break the rules (tests/spark/test_transform.py): each fails its batch."""

from __future__ import annotations

from typing import Any


def drop_key(df: Any) -> Any:
    return df.drop("_source_key")


def move_key(df: Any) -> Any:
    from pyspark.sql import functions as F

    return df.withColumns({"_source_bucket": F.lit("x"), "_source_key": F.lit("y")})


def nothing(df: Any) -> None:
    return None
