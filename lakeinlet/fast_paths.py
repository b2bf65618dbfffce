"""The switch for lakeinlet's fast paths, each of which shadows a library's own (plain) path:
`LAKEINLET_FAST_PATHS` is `on` (default), `off`, or a comma list of names to turn off."""

from __future__ import annotations

import os

NAMES = ("blind-append", "changelog-tail", "file-index", "lineage-hash", "one-pass")
"""blind-append: the changelog writer's own Delta log commits (plain: delta-rs write).
changelog-tail: the loader reads new changelog versions from their commit files (plain: delta-rs CDF).
file-index: the Spark read is planned from the HEADs already made (plain: Spark lists the files).
lineage-hash: lineage joined on 64-bit path hashes (plain: on the path strings).
one-pass: a Parquet batch written while its checks ride on the write (plain: read and checked first)."""

VARIABLE = "LAKEINLET_FAST_PATHS"


def enabled(name: str) -> bool:
    """Whether fast path `name` (one of NAMES) is on.

    Raises:
        ValueError: `name` is not a known fast path (a typo would silently keep it on).
    """
    if name not in NAMES:
        raise ValueError(f"unknown fast path {name!r}: expected one of {', '.join(NAMES)}")
    value = os.environ.get(VARIABLE, "on").strip().lower()
    if value in ("", "on", "all"):
        return True
    if value in ("off", "none"):
        return False
    return name not in {v.strip() for v in value.split(",")}
