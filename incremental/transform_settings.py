"""Settings of the transform step (rows shaped between the checks and the write) and the value a
run carries: Spark SQL over the view `source`, or a Python hook `module:function`."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lakeinlet.config import setting

HOOK = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
VIEW = "source"
"""The name a transform's SQL reads the batch's rows by."""


@dataclass(frozen=True)
class Transform:
    """One transform: `sql` (over the view `source`) or `hook` (a DataFrame in, one out)."""

    sql: str | None = None
    hook: str | None = None

    @property
    def label(self) -> str:
        """How lines name it: the hook's `module:function`, or the SQL on one line."""
        return self.hook or "--transform-sql " + repr(" ".join((self.sql or "").split())[:120])

    def function(self) -> Callable[[Any], Any]:
        """The hook's function, imported (`hook_problem` has said why it cannot be)."""
        module, _, name = (self.hook or "").partition(":")
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class TransformSection:
    """How a batch's rows are shaped before they are written (docs/concepts/shaping.md)."""

    transform_sql: str | None = setting(
        None, "Spark SQL run on each batch's rows after the per-object checks and before the write, "
        "reading them as the view `source` (`SELECT r.* , _source_bucket, _source_key, "
        "_source_etag, _source_event_time, _ingest_batch FROM source LATERAL VIEW explode(Records) "
        "t AS r`): explode, from_json, regexp_extract, split work as in Spark. The lineage columns "
        "must come through (a query that drops one is refused at start-up, or fails its batch); "
        "an error fails the batch in one line naming the transform, nothing committed. The "
        "ledger's `rows` stay the rows read; its reason says the rows written when they differ.",
        metavar="SQL")
    transform: str | None = setting(
        None, "A Python hook `module:function` that takes the batch's rows (a Spark DataFrame) "
        "and returns the rows to write, for what SQL cannot say; imported at start-up (it runs on "
        "the driver, so only the driver needs the module, unless it adds Python UDFs). Same rules "
        "as --transform-sql, which it cannot be given with.", metavar="MODULE:FUNCTION")

    @property
    def step(self) -> Transform | None:
        """The transform to run (None: rows are written as read); empty values are unset."""
        sql, hook = (self.transform_sql or "").strip() or None, (self.transform or "").strip() or None
        return Transform(sql, hook) if sql or hook else None

    def validate(self) -> list[str]:
        step = self.step
        if step is None:
            return []
        if step.sql and step.hook:
            return ["--transform-sql and --transform: give one (a route may set either, not both)"]
        return [p] if step.hook and (p := hook_problem(step.hook)) else []


def hook_problem(hook: str) -> str | None:
    """Why `module:function` cannot be the hook (None: it can): its form, its import, its type."""
    if not HOOK.match(hook):
        return f"--transform: expected module:function (e.g. shaping.flatten), found {hook!r}"
    module, _, name = hook.partition(":")
    try:
        found = getattr(importlib.import_module(module), name, None)
    except Exception as exc:  # any import-time error of the user's module is a reason to refuse
        first = next(iter(str(exc).splitlines()), "")
        return (f"--transform {hook}: module {module!r} cannot be imported ({type(exc).__name__}: "
                f"{first}); put it on the driver's PYTHONPATH")
    if not callable(found):
        what = "not found" if found is None else f"not a function (it is {type(found).__name__})"
        return f"--transform {hook}: {name!r} in module {module!r} is {what}"
    return None
