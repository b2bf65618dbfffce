"""What each ingest-ledger status means, for the people reading a ledger: the docs' ledger-status page
is generated from this table, and a unit test holds it to `model.STATUSES`."""

from __future__ import annotations

from lakeinlet.incremental.model import (
    CORRUPT,
    FILTERED,
    LOADED,
    MISSING,
    REMOVED,
    SCHEMA_CONFLICT,
    TOO_LARGE,
    UNROUTED,
)

MEANINGS: dict[str, tuple[str, str]] = {
    LOADED: ("The object version's rows are in the target, committed with the checkpoint (an object "
             "with no record, e.g. a CSV of only its header, is loaded with 0 rows). `bad_records` "
             "counts its malformed JSON/CSV records, kept in the quarantine table.",
             "Nothing; `--after-load` may clean the source up once it is old enough."),
    MISSING: ("The object could not be read: it was deleted before the load, or the HEAD or read "
              "answered no such key, no such bucket or access denied (the reason says which).",
              "Check the loader's permissions; a backfill or a new event plans it again."),
    CORRUPT: ("The object has bytes but no readable rows (its error kept), a JSON/CSV object has no "
              "parseable line, or a Parquet object yielded fewer rows than its footer promises (a "
              "corrupt row group). Nothing of it is loaded.",
              "Fix the producer; a new version of the object (a new etag) is loaded."),
    FILTERED: ("Not meant for this table, or not this version: a `--prefix`/`--suffix`/`--regex`/"
               "`--ignore-prefix` filter, a bucket outside `--bucket`, lakeinlet's own tables, an older "
               "version's event after a newer one's, an object overwritten since its event or during "
               "the load (the newer version's event loads it), or a removal with `--on-delete "
               "append-only` (the default). The reason says which.",
               "Usually nothing; change the filters and backfill to load objects filtered out."),
    TOO_LARGE: ("The object is larger than `--max-bytes`, so no batch can hold it.",
                "Raise `--max-bytes` for what comes next: like loaded and corrupt, too_large is final for "
                "that version, so only a new version of the object is loaded."),
    SCHEMA_CONFLICT: ("The object's column types conflict with the table's (the columns are named, e.g. "
                      "`order_id` string where the table has bigint); the rest of the batch loaded "
                      "(with `--on-type-conflict quarantine`, the default).",
                      "Fix the producer, or widen the table's type with `--schema`, then reset or "
                      "backfill: a new event plans the object again."),
    REMOVED: ("An `ObjectRemoved` or lifecycle-expiration event deleted the key's rows (`--on-delete "
              "remove-rows`), in the commit that moved the checkpoint past it; the row counts what was "
              "deleted.",
              "Nothing."),
    UNROUTED: ("With routes: no route selects the object. Recorded once, in the ledger of "
               "`--unrouted-table` (default `<changelog>_unrouted_ledger`), not in any route's.",
               "Add a route for it and backfill, or leave it."),
}
"""Status → (what it means, what the operator can do)."""
