"""Opening Delta tables with delta-rs: one place that knows a missing table is not an error."""

from __future__ import annotations

from deltalake import DeltaTable
from deltalake.exceptions import TableNotFoundError


def open_table(uri: str, options: dict[str, str] | None, version: int | None = None) -> DeltaTable | None:
    """The Delta table at `uri` (at `version`, default the newest), or None if none exists yet."""
    try:
        return DeltaTable(uri, version=version, storage_options=options)
    except TableNotFoundError:
        return None
