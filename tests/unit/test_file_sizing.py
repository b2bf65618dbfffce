"""How many files a batch is written as, from its source bytes and the target file size."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lakeinlet.incremental.model import CORRUPT, LOADED, Outcome, PlannedObject
from lakeinlet.incremental.targets.sizing import files_for, source_bytes

pytestmark = pytest.mark.unit
MB = 1024 * 1024


@pytest.mark.parametrize(("size", "files"), [(0, 1), (1, 1), (128 * MB, 1), (128 * MB + 1, 2),
                                             (1000 * MB, 8)])
def test_files_for_rounds_up_to_whole_files(size: int, files: int) -> None:
    assert files_for(size, 128 * MB) == files


def obj(key: str, size: int) -> PlannedObject:
    return PlannedObject("b", key, "e", None, size, f"id-{key}", datetime.now(UTC), 0)


def test_source_bytes_counts_only_objects_whose_rows_are_written() -> None:
    outcomes = [Outcome(obj("a", 10), LOADED, "", 3), Outcome(obj("b", 20), CORRUPT, "bad"),
                Outcome(obj("c", 40), LOADED, "zero rows", 0), Outcome(obj("d", 80), LOADED, "", 1)]
    assert source_bytes(outcomes) == 90
