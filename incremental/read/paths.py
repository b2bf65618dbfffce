"""Where Spark reads each object, judged per object: one whose Hadoop path names another key is set
aside before the read (its rows would carry a key they do not come from), and a read that cannot be
planned is narrowed down to the objects that break it, which are set aside: never the batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from urllib.parse import unquote, urlsplit

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from lakeinlet import jvm as lakejvm
from lakeinlet.incremental.model import CORRUPT, FILTERED, MISSING, PlannedObject
from lakeinlet.incremental.read.causes import root_cause
from lakeinlet.incremental.read.verdicts import Failed

MAX_PLANS = 64
"""Reads a search for the objects that break a batch's read may plan before it gives up (and the
batch fails as before): one bad object among a thousand takes about twenty."""


def elsewhere(spark: SparkSession, uri: Callable[[PlannedObject], str],
              objs: Sequence[PlannedObject]) -> Failed:
    """The objects whose path, as Hadoop's `Path` spells it, is another bucket or key (`filtered`)."""
    out: Failed = {}
    for o, path in zip(objs, lakejvm.path_uris(spark, map(uri, objs)), strict=True):
        parts = urlsplit(path)
        bucket, key = parts.netloc, unquote(parts.path).removeprefix("/")
        if (bucket, key) != (o.bucket, o.key):
            out[(o.bucket, o.key)] = (FILTERED, f"Hadoop's Path reads s3://{bucket}/{key} for this key: "
                                                "never read under another key (upload it under a key "
                                                "without `.`, `..` or empty segments to load it)")
    return out


def not_found(uri: Callable[[PlannedObject], str], objs: Sequence[PlannedObject],
              error: BaseException) -> Failed:
    """The objects Spark's planning found missing (deleted since their HEAD), named in `error`."""
    if not isinstance(error, AnalysisException) or "PATH_NOT_FOUND" not in str(error):
        return {}
    return {(o.bucket, o.key): (MISSING, f"object not found when read: {uri(o)}") for o in objs
            if uri(o) in str(error)}


def unplannable(plan: Callable[[Sequence[PlannedObject]], object], objs: Sequence[PlannedObject],
                error: BaseException) -> Failed:
    """The objects whose read cannot be planned (`plan` of the batch raised `error`), found by
    planning halves, each with `missing` or `corrupt` and the root cause; empty when the batch
    cannot be told apart (every object fails and the error is not Spark's analysis of a path, e.g.
    an outage, or the search took more than MAX_PLANS reads): the caller then raises `error`."""
    budget = [MAX_PLANS]
    found = search(plan, list(objs), budget)
    if found is None or (len(found) == len(objs) and not isinstance(error, AnalysisException)):
        return {}
    return {(o.bucket, o.key): _status(exc) for o, exc in found}


def search(plan: Callable[[Sequence[PlannedObject]], object], objs: list[PlannedObject],
            budget: list[int]) -> list[tuple[PlannedObject, BaseException]] | None:
    """The objects of `objs` that fail alone (None: out of budget), halving a failing group."""
    if budget[0] <= 0:
        return None
    budget[0] -= 1
    try:
        plan(objs)
        return []
    except Exception as exc:  # py4j's and Spark's errors alike: the halves tell which object
        if len(objs) == 1:
            return [(objs[0], exc)]
    halves = [search(plan, half, budget) for half in (objs[:len(objs) // 2], objs[len(objs) // 2:])]
    return None if None in halves else [f for half in halves if half for f in half]


def _status(exc: BaseException) -> tuple[str, str]:
    text = root_cause(exc)
    gone = "FileNotFound" in str(exc) or "PATH_NOT_FOUND" in str(exc) or "does not exist" in text.lower()
    return (MISSING if gone else CORRUPT), f"Spark cannot plan a read of it: {text}"
