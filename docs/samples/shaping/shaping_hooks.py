"""A transform hook (`--transform shaping_hooks:flatten`): nested JSON flattened, every struct field
its own column named by its path (`user.address.city` → `user_address_city`); arrays stay arrays."""

from __future__ import annotations

from typing import Any


def flatten(df: Any) -> Any:
    """The batch's rows with struct columns flattened; lineage columns pass through untouched."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    def leaves(path: list[str], dtype: Any) -> list[Any]:
        if isinstance(dtype, T.StructType):
            return [c for f in dtype.fields for c in leaves([*path, f.name], f.dataType)]
        return [F.col(".".join(f"`{p}`" for p in path)).alias("_".join(path))]

    return df.select(*(c for f in df.schema.fields for c in leaves([f.name], f.dataType)))
