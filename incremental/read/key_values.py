"""Partition values in keys: each `name=value` folder below the folder of the prefix a key was
selected by (`sales/dt=2026-11-27/region=eu/x.parquet` → `dt`, `region`), per --partition-columns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from lakeinlet.incremental.artefacts import base_folder
from lakeinlet.incremental.model import PlannedObject

HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"
"""What Hive and Spark write for a null partition value."""


def wanted(setting: str) -> tuple[str, ...] | None:
    """The columns `--partition-columns` asks for: None for `auto` (every one found), () for `none`."""
    text = setting.strip()
    if text.lower() == "auto":
        return None
    if text.lower() in ("none", ""):
        return ()
    return tuple(c.strip() for c in text.split(",") if c.strip())


def values(key: str, prefixes: Sequence[str] = ()) -> dict[str, str | None]:
    """The `name=value` folders of `key` below its prefix's folder (the file name is never one),
    Hive-unescaped (%XX only: a `+` stays a `+`); an empty value or Hive's default partition is
    None. A name found twice keeps its first value; names match without case, spelled as first found."""
    folders = key[len(base_folder(key, prefixes)):].split("/")[:-1]
    out: dict[str, str | None] = {}
    for part in folders:
        name, eq, value = part.partition("=")
        name = unquote(name)
        if not eq or not name or name.lower() in (n.lower() for n in out):
            continue
        text = unquote(value)
        out[name] = None if text in ("", HIVE_DEFAULT) else text
    return out


def found(objs: Sequence[PlannedObject], prefixes: Sequence[str], setting: str,
          table: Mapping[str, Any] | None, strict: bool) -> dict[str, dict[str, str | None]]:
    """Per key, the values of the columns to add: every one found (`auto`), or those named; in
    --schema-mode strict, only columns an existing table holds."""
    names = wanted(setting)
    if names == ():
        return {}
    out = {}
    for o in objs:
        got = {k.lower(): (k, v) for k, v in values(o.key, prefixes).items()}
        if names is not None:
            got = {n.lower(): (n, got.get(n.lower(), (n, None))[1]) for n in names}
        if strict and table is not None:
            held = {c.lower() for c in table}
            got = {k: kv for k, kv in got.items() if k in held}
        out[o.key] = dict(got.values())
    return out
