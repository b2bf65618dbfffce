"""A read whose planning fails is narrowed down to the objects that fail alone (set aside), without
Spark: `plan` stands for Spark's planning of a read of some objects."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pyspark.errors import AnalysisException

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read.paths import MAX_PLANS, unplannable
from tests.fakes import T0

pytestmark = pytest.mark.unit


def objs(n: int) -> list[PlannedObject]:
    return [PlannedObject("b", f"k{i}", None, None, 1, f"e{i}", T0, 0) for i in range(n)]


class Planner:
    """Fails a read holding any of `bad` (or every read, `always`), counting reads."""

    def __init__(self, bad: set[str], always: Exception | None = None) -> None:
        self.bad, self.always, self.plans = bad, always, 0

    def __call__(self, some: Sequence[PlannedObject]) -> None:
        self.plans += 1
        if self.always is not None:
            raise self.always
        if found := [o.key for o in some if o.key in self.bad]:
            raise RuntimeError(f"java.lang.IllegalArgumentException: bucket is null/empty ({found[0]})")


def test_the_objects_that_break_a_read_are_found_by_halves_and_set_aside_alone() -> None:
    plan, batch = Planner({"k3", "k77"}), objs(100)
    found = unplannable(plan, batch, RuntimeError("o116.load"))
    assert set(found) == {("b", "k3"), ("b", "k77")}
    assert found[("b", "k3")] == ("corrupt", "Spark cannot plan a read of it: "
                                             "java.lang.IllegalArgumentException: bucket is null/empty (k3)")
    assert plan.plans <= 30


def test_an_outage_or_a_search_too_long_fails_the_batch_but_a_path_spark_refuses_is_set_aside() -> None:
    outage = Planner(set(), always=RuntimeError("java.net.SocketTimeoutException: connect timed out"))
    assert unplannable(outage, objs(4), RuntimeError("o1.load")) == {}
    many = Planner({f"k{i}" for i in range(200)})  # 200 objects to find take more reads than allowed
    assert unplannable(many, objs(200), RuntimeError("x")) == {} and many.plans == MAX_PLANS
    refused = AnalysisException("[PATH_NOT_FOUND] Path does not exist: s3a://b/k0.")
    assert unplannable(Planner(set(), always=refused), objs(1), refused) == {
        ("b", "k0"): ("missing", "Spark cannot plan a read of it: [PATH_NOT_FOUND] Path does not exist: "
                                 "s3a://b/k0.")}


def test_a_read_that_fails_only_as_a_whole_fails_the_batch() -> None:
    def together(some: Sequence[PlannedObject]) -> None:
        if len(some) > 1:
            raise RuntimeError("Failed to merge incompatible schemas")

    assert unplannable(together, objs(2), RuntimeError("merge")) == {}
