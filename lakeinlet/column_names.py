"""Column names as Spark expressions must spell them: quoted, so a name with a dot (`price.usd`)
is that column, not a field of a struct `price`."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F


def quoted(name: str) -> str:
    """`name` in backquotes (a backquote inside doubled), as Spark's parser reads a literal name."""
    return "`" + name.replace("`", "``") + "`"


def col(name: str) -> Column:
    """The column named exactly `name` (`F.col` would read dots as struct fields)."""
    return F.col(quoted(name))
