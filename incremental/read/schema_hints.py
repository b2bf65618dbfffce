"""`--schema-hints "price DECIMAL(10,2), ts TIMESTAMP"` read without Spark: the columns whose types
are pinned while the others are inferred (Auto Loader's `schemaHints`), and the start-up refusals."""

from __future__ import annotations

import re
from typing import Any

from pyspark.sql import types as T

from lakeinlet.errors import TerminalError
from lakeinlet.incremental.model import SCHEMA_CONFLICT
from lakeinlet.incremental.read.checks import HINTED

FLAG = "_lakeinlet_unhinted"
"""Per row: what each hinted value that did not cast was (`unhinted`; the reader's own column, dropped
before the write)."""
OWN = ("_source_bucket", "_source_key", "_source_etag", "_source_event_time", "_ingest_batch",
       "_rescued_data", "_corrupt_record")
EXAMPLE = '"price DECIMAL(10,2), ts TIMESTAMP"'
SIMPLE = {
    "boolean": T.BooleanType, "tinyint": T.ByteType, "byte": T.ByteType, "smallint": T.ShortType,
    "short": T.ShortType, "int": T.IntegerType, "integer": T.IntegerType, "bigint": T.LongType,
    "long": T.LongType, "float": T.FloatType, "real": T.FloatType, "double": T.DoubleType,
    "string": T.StringType, "binary": T.BinaryType, "date": T.DateType, "timestamp": T.TimestampType,
    "timestamp_ltz": T.TimestampType, "timestamp_ntz": T.TimestampNTZType,
}
TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)+`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|([<>(),:.])|(\S))")


class HintError(ValueError):
    """A hint that does not parse, or that lakeinlet refuses (the message is one line)."""


def parse(text: str | None) -> dict[str, tuple[str, Any]]:
    """Lower-case column name → (name as given, Spark type), in the order given.

    Raises:
        HintError: the text does not parse, names a column twice, a nested path or one of
            lakeinlet's own columns.
    """
    if not text or not text.strip():
        return {}
    p = _Parser(text)
    out: dict[str, tuple[str, Any]] = {}
    while True:
        name, hint = p.hint()
        if name.lower() in out:
            raise HintError(f"column {name} is given twice ({out[name.lower()][0]} and {name}: column "
                            "names match without case); give it once")
        if name.lower() in OWN:
            raise HintError(f"{name} is a column lakeinlet writes itself: it takes no hint")
        out[name.lower()] = (name, hint)
        if p.done():
            return out
        p.expect(",")


def problems(text: str | None, schema: str | None, source_format: str) -> list[str]:
    """Why `--schema-hints` cannot be used as given (one line each; empty: it can)."""
    if not text or not text.strip():
        return []
    try:
        hints = parse(text)
    except HintError as exc:
        return [f"--schema-hints: {exc}"]
    if schema:
        first = next(iter(hints.values()))
        return [f"--schema-hints with --schema: the schema fixes every column's type; put the type in "
                f"--schema instead (e.g. {first[0]} {first[1].simpleString().upper()})"]
    if source_format == "text":
        return ["--schema-hints with --source-format text: its rows have the one string column `value`; "
                "cast it in --transform-sql"]
    return []


def verdict(found: str, uri: str, fail: bool) -> tuple[str, str]:
    """The verdict on an object whose values of hinted columns did not cast (`found`: the read's
    flags, e.g. "'price' is decimal(10,2) by --schema-hints but a string value … does not cast to it").

    Raises:
        TerminalError: with `fail` (--on-type-conflict fail), naming the object.
    """
    why = f"type conflict: column {found} ({uri})"
    if fail:
        raise TerminalError(f"{why}. The checkpoint did not move. To go on: fix the values and upload "
                            "the object again, or --on-type-conflict quarantine to load the rest")
    return (SCHEMA_CONFLICT, f"{why}. To load it: fix the values and upload the object again (its new "
                             "event loads it), or --on-type-conflict rescue to load them into "
                             "_rescued_data; --on-type-conflict fail stops the run instead")


def unhinted(name: str, hint: Any, found: Any) -> str:
    """One column's flag: what a value of type `found` did not cast to."""
    return (f"{name!r} is {hint.simpleString()} {HINTED} but a {found.simpleString()} value in the "
            "object does not cast to it")


class _Parser:
    """A recursive-descent reader of `name TYPE, …` (Spark's DDL types, no NOT NULL or COMMENT)."""

    def __init__(self, text: str) -> None:
        self.text, self.tokens, self.i = text, self._tokens(text), 0

    def _tokens(self, text: str) -> list[tuple[str, str]]:
        out, pos = [], 0
        while pos < len(text) and (m := TOKEN.match(text, pos)) and m.group(0).strip():
            kind = ("name", "word", "number", "punct", "bad")[m.lastindex - 1]  # type: ignore[operator]
            if kind == "bad":
                raise HintError(f"unexpected {m.group(5)!r} in {text!r}; expected e.g. {EXAMPLE}")
            out.append((kind, m.group(m.lastindex)))  # type: ignore[arg-type]
            pos = m.end()
        return out

    def done(self) -> bool:
        return self.i >= len(self.tokens)

    def _next(self, what: str) -> tuple[str, str]:
        if self.done():
            raise HintError(f"expected {what} at the end of {self.text!r}; e.g. {EXAMPLE}")
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, punct: str) -> None:
        kind, value = self._next(repr(punct))
        if (kind, value) != ("punct", punct):
            raise HintError(f"expected {punct!r}, found {value!r} in {self.text!r}; e.g. {EXAMPLE}")

    def _peek(self, punct: str) -> bool:
        return not self.done() and self.tokens[self.i] == ("punct", punct)

    def name(self) -> str:
        kind, value = self._next("a column name")
        if kind not in ("name", "word"):
            raise HintError(f"expected a column name, found {value!r} in {self.text!r}; e.g. {EXAMPLE}")
        return value[1:-1].replace("``", "`") if kind == "name" else value

    def hint(self) -> tuple[str, Any]:
        name = self.name()
        if self._peek("."):
            raise HintError(f"{name}.…: nested paths are not supported; hint the whole column "
                            f"({name} STRUCT<…>) or cast the field in --transform-sql")
        return name, self.type()

    def type(self) -> Any:
        kind, word = self._next("a type")
        low = word.lower()
        if kind == "word" and low in ("array", "map", "struct"):
            return self._complex(low)
        if kind == "word" and low in ("decimal", "dec", "numeric"):
            return self._decimal()
        if kind == "word" and low in ("varchar", "char"):
            self._sized()
            return T.StringType()
        if kind != "word" or low not in SIMPLE:
            raise HintError(f"unknown type {word!r} in {self.text!r}; expected one of "
                            f"{', '.join(sorted(SIMPLE))}, DECIMAL(p,s), ARRAY<…>, MAP<…,…>, STRUCT<…>")
        return SIMPLE[low]()

    def _number(self) -> int:
        kind, value = self._next("a number")
        if kind != "number":
            raise HintError(f"expected a number, found {value!r} in {self.text!r}")
        return int(value)

    def _sized(self) -> list[int]:
        if not self._peek("("):
            return []
        self.expect("(")
        sizes = [self._number()]
        while self._peek(","):
            self.expect(",")
            sizes.append(self._number())
        self.expect(")")
        return sizes

    def _decimal(self) -> Any:
        sizes = self._sized() or [10, 0]
        precision, scale = sizes[0], sizes[1] if len(sizes) > 1 else 0
        if len(sizes) > 2 or not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise HintError(f"DECIMAL({','.join(map(str, sizes))}) in {self.text!r}: expected "
                            "DECIMAL(p,s) with 1 <= p <= 38 and 0 <= s <= p")
        return T.DecimalType(precision, scale)

    def _complex(self, kind: str) -> Any:
        self.expect("<")
        if kind == "array":
            out: Any = T.ArrayType(self.type())
        elif kind == "map":
            key = self.type()
            self.expect(",")
            out = T.MapType(key, self.type())
        else:
            out = T.StructType(self._fields())
        self.expect(">")
        return out

    def _fields(self) -> list[T.StructField]:
        fields: list[T.StructField] = []
        while not self._peek(">"):
            if fields:
                self.expect(",")
            name = self.name()
            if self._peek(":"):
                self.expect(":")
            fields.append(T.StructField(name, self.type()))
        return fields
