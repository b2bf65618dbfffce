"""A batch whose Spark job fails is narrowed down to the objects that fail alone, without Spark:
`read` stands for the batch's Spark job over some objects."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from lakeinlet.incremental.model import PlannedObject
from lakeinlet.incremental.read.isolate import failing_alone
from tests.fakes import T0

pytestmark = pytest.mark.unit
READ_ERROR = "org.apache.spark.SparkException: Encountered error while reading file s3a://b/{}. Details:"


def objs(n: int) -> list[PlannedObject]:
    return [PlannedObject("b", f"k{i}", None, None, 1, f"e{i}", T0, 0) for i in range(n)]


def reading(bad: set[str], error: str = READ_ERROR) -> Callable[[Sequence[PlannedObject]], None]:
    def read(some: Sequence[PlannedObject]) -> None:
        if found := [o.key for o in some if o.key in bad]:
            raise RuntimeError(error.format(found[0]) + "\nCaused by: java.io.IOException: not a gzip file")
    return read


def test_the_objects_whose_job_fails_alone_are_set_aside_with_the_first_line_of_the_cause() -> None:
    found = failing_alone(reading({"k2"}), objs(8), RuntimeError(READ_ERROR.format("k2")))
    assert found == {("b", "k2"): ("corrupt", "Spark cannot read it: java.io.IOException: not a gzip file "
                                              "— the object is named .gz but is not gzip: upload it under "
                                              "a name without .gz, or compressed with gzip")}
    alone = failing_alone(reading({"k0"}), objs(1), RuntimeError(READ_ERROR.format("k0")))
    assert set(alone) == {("b", "k0")}  # a batch of one bad object is not failed for ever


def test_the_store_or_the_cluster_failing_sets_nothing_aside() -> None:
    outage = "Encountered error while reading file s3a://b/{}: com.amazonaws.SdkClientException: Unable"
    assert failing_alone(reading({"k1"}, outage), objs(4), RuntimeError(outage.format("k1"))) == {}
    unnamed = "java.lang.IllegalStateException: executor lost {}"
    assert failing_alone(reading({"k0", "k1"}, unnamed), objs(2), RuntimeError("lost")) == {}
