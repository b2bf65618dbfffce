"""The bodies of `lakeinlet-load`'s commands: run (one loop for a table or routes), checkpoint
show/reset, backfill, vacuum, cleanup, maintain, status."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lakeinlet.incremental.settings import LoaderConfig


def locations(config: LoaderConfig) -> dict[str, str]:
    """The tables a command reads or writes, by the flag that names them."""
    t = config.tables
    return {"--changelog": t.changelog or "", "--table": t.table or "", "--ledger": t.ledger_uri,
            "--quarantine": t.quarantine_uri}
