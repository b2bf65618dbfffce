"""What Iceberg and Spark answer when another writer or creator was first, read from their error
texts in one place, and the loader's errors they become."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lakeinlet.errors import CommitConflict, TransientError

CONCURRENT = ("Cannot fast-forward", "metadata refresh is required", "CommitFailedException",
              "older than last sequence number")
"""Iceberg's answers when another writer committed first (main moved, or the table's metadata
changed under a branch operation). A REST catalog server before Iceberg 1.11 answers a concurrent
commit to another branch with a 400 "Cannot add snapshot with sequence number N older than last
sequence number N" (apache/iceberg#15001), not a retryable CommitFailedException."""
EXISTING = ("TABLE_OR_VIEW_ALREADY_EXISTS", "AlreadyExists")
"""Spark's and Iceberg's answers to creating what is already there (another creator was first)."""
CREATOR_RACE = ("already exists", "iceberg_namespace_properties", "Server error")
"""A catalog's answers to the second of two creators that both found something missing: a JDBC
catalog's own tables created twice (SQLite: "table iceberg_tables already exists"), or a
namespace's row inserted twice into a JDBC store, directly or through a REST server (a 500:
"Server error: UncheckedSQLException: Failed to execute: INSERT INTO iceberg_namespace_properties …";
any REST 500 is tried once more, a refusal such as access denied is not)."""
CATALOG_TABLES_RACED = "already exists"
"""pyiceberg's answer to the second of two loaders opening a new SQL catalog at once: both found
the catalog's own tables missing, the second CREATE TABLE fails ("table iceberg_tables already
exists"); opened again, the catalog finds them there."""
CONFLICT, EXISTS, RACED = "conflict", "exists", "raced"
"""What `classify` makes of an error (None: none of these)."""


def classify(exc: BaseException) -> str | None:
    """The one place where Spark's and Iceberg's error texts are read: CONFLICT (another writer
    committed first: `CONCURRENT`), EXISTS (what was being created is there: `EXISTING`), RACED
    (the catalog refused the second of two creators: `CREATOR_RACE`), else None."""
    text = str(exc)
    for kind, said in ((CONFLICT, CONCURRENT), (EXISTS, EXISTING), (RACED, CREATOR_RACE)):
        if any(s in text for s in said):
            return kind
    return None


def catalog_tables_raced(exc: BaseException) -> bool:
    """Whether opening a SQL catalog lost the race to create its own tables (`CATALOG_TABLES_RACED`):
    opening it again finds them."""
    return CATALOG_TABLES_RACED in str(exc)


def create_namespace(spark: Any, sql: str) -> None:
    """Run `sql` (a CREATE NAMESPACE IF NOT EXISTS); a creator race lost becomes CreatorRaced."""
    try:
        spark.sql(sql)
    except Exception as exc:
        if classify(exc) not in (EXISTS, RACED):
            raise
        said = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
        raise CreatorRaced(f"{sql}: {said[:200]}") from exc


class CreatorRaced(TransientError):
    """The catalog refused a creation that another creator made at the same moment."""


@contextmanager
def concurrency(uri: str) -> Iterator[None]:
    """Iceberg's answers to a concurrent commit become CommitConflict: the loader re-plans from
    the checkpoint the winner left (nothing of this batch reached main)."""
    try:
        yield
    except Exception as exc:
        if classify(exc) != CONFLICT:
            raise
        said = next((ln for ln in str(exc).splitlines() if any(s in ln for s in CONCURRENT)), "")
        raise CommitConflict(f"commit to {uri} lost to a concurrent writer: {said.strip()[:200]}") from exc
