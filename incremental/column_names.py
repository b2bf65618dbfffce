"""Which column names each target format can store (one rule, declared here for all formats), the
opt-in renamer (`--column-names rename`), and the partition columns' check; pure verdicts."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

Tree = Mapping[str, "Tree"]
"""Column names, each with the names of its struct fields (array and map values' included)."""
AVRO = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
STRICTEST = "hudi"


@dataclass(frozen=True)
class NameRule:
    """What a format cannot store in a column name, in code and in words."""

    refuses: Callable[[str], bool]
    what: str


RULES = {
    "hudi": NameRule(lambda n: not AVRO.fullmatch(n),
                     "Hudi stores Avro names: a letter or _, then letters, digits or _"),
    "delta": NameRule(lambda n: not n, "Delta refuses an empty name (delta-rs 1.6 and delta-spark 3.3 "
                                       "store any other, spaces and ' ,;{}()\\n\\t=' included)"),
    "iceberg": NameRule(lambda n: not n, "Iceberg refuses an empty name (it keeps names in its "
                                         "JSON metadata and sanitizes the Avro names itself)"),
}
"""Each format's own rule (the default: a table loading today keeps loading). Delta's protocol
once forbade ' ,;{}()\\n\\t=' without column mapping; delta-spark 3.3 reads and appends such
names (measured), so refusing them would break Delta tables that load. The renamer makes Hudi's
names (the strictest), so a renamed table can move between formats."""


def portable(name: str) -> str:
    """`name` with each character outside [A-Za-z0-9_] turned into `_` (and `_` before a leading
    digit): storable by every format, and the same name every time."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + out if not out or out[0].isdigit() else out


def unusable(found: Tree, fmt: str, table: Tree | None = None) -> list[str]:
    """Dotted paths of the names in `found` that `fmt` cannot store; a name the table already
    holds at that path is kept (it was stored before)."""
    rule, out = RULES[fmt], []
    for name, fields in found.items():
        kept = table is not None and name in table
        if rule.refuses(name) and not kept:
            out.append(name)
            continue
        out += [f"{name}.{p}" for p in unusable(fields, fmt, table.get(name, {}) if kept and table else None)]
    return out


def renames(found: Tree, table: Tree | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """Per dotted path, the new name of each name the strictest format cannot store (`portable`:
    what every format stores, whatever the table's format), and the paths
    whose new name clashes with a sibling's in `found` (case-insensitively, as Spark resolves
    names), each with the clash in words: within one object, two columns that would become one."""
    new, clashes = {}, {}
    for path in unusable(found, STRICTEST, table):
        parent, _, name = path.rpartition(".")
        want = new[path] = portable(name)
        taken = [s for s in _at(found, parent)
                 if s != name and new.get(_join(parent, s), s).lower() == want.lower()]
        if taken:
            clashes[path] = f"renamed to {want!r} it clashes with column {_join(parent, taken[0])!r}"
    return new, clashes


def _at(tree: Tree, path: str) -> Tree:
    for part in path.split(".") if path else []:
        tree = tree.get(part, {})
    return tree


def _join(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


def reason(path: str, fmt: str) -> str:
    """Why an object is set aside for column `path`, and what to do (one line)."""
    return (f"column {path!r} cannot be stored in a {fmt} table ({RULES[fmt].what}): rename it in the "
            f"source and upload it again, or set --column-names rename to load it as "
            f"{portable(path.rpartition('.')[2])!r}")


def clash_reason(path: str, clash: str) -> str:
    return (f"column {path!r} cannot be renamed: {clash}; rename it in the source and upload it "
            "again")


def missing_partitions(partition_by: tuple[str, ...], columns: list[str], where: str) -> str | None:
    """One line naming the partition columns not among `columns` (None: all there); names match
    exactly, as delta-rs matches them (Spark alone would take `Day` for `day`)."""
    gone = [c for c in partition_by if c not in columns]
    if not gone:
        return None
    return (f"--partition-by {','.join(gone)}: no such column {where}; columns available: "
            f"{', '.join(columns)}")


def schema_names(text: str | None) -> list[str] | None:
    """The top-level column names of an explicit `--schema` (a JSON schema file, or DDL), read
    without Spark; None when there is none, or it does not parse here (Spark judges it later)."""
    if not text:
        return None
    if text.strip().endswith(".json") and Path(text).is_file():
        try:
            return [f["name"] for f in json.loads(Path(text).read_text())["fields"]]
        except (ValueError, KeyError, TypeError):
            return None
    body = text.strip()
    if body.lower().startswith("struct<") and body.endswith(">"):
        body = body[7:-1]
    names = [re.match(r"\s*(`[^`]+`|[^\s:]+)", part) for part in _top_level(body)]
    return [m.group(1).strip("`") for m in names if m] if all(names) else None


def _top_level(body: str) -> list[str]:
    """`body` split at the commas outside <> and ()."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(body):
        depth += (c in "<(") - (c in ">)")
        if c == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    return [p for p in [*parts, body[start:]] if p.strip()]
