"""A batch large enough is written by a task per core, each file still holding at least
SPREAD_BYTES of source data; a small batch stays one task (one file)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from lakeinlet.incremental.targets.sizing import files_for, sized, spread

pytestmark = pytest.mark.unit
MB = 1024 * 1024


@pytest.mark.parametrize(("cores", "size", "files"), [
    (2, 1 * MB, 1), (2, 31 * MB, 1), (2, 32 * MB, 2), (2, 80 * MB, 2), (1, 80 * MB, 1),
    (16, 1000 * MB, 16), (4, 2000 * MB, 16), (8, 40 * MB, 2)])
def test_tasks_per_batch(cores: int, size: int, files: int) -> None:
    file_bytes = spread(cores, size, 128 * MB)
    assert files_for(size, file_bytes) == files
    assert file_bytes <= 128 * MB


class Frame:
    """What `sized` asks of a DataFrame: the session's cores, and the layout it asks for."""

    def __init__(self, cores: int) -> None:
        self.sparkSession = SimpleNamespace(sparkContext=SimpleNamespace(defaultParallelism=cores))

    def coalesce(self, n: int) -> tuple[str, int]:
        return ("coalesce", n)

    def repartition(self, n: int, *cols: str) -> tuple[object, ...]:
        return ("repartition", n, *cols)


def test_sized_spreads_a_big_batch_over_the_sessions_cores() -> None:
    assert sized(Frame(2), 80 * MB, 128 * MB, []) == ("coalesce", 2)
    assert sized(Frame(2), 8 * MB, 128 * MB, []) == ("coalesce", 1)
    assert sized(Frame(4), 300 * MB, 128 * MB, ["day"]) == ("repartition", 4, "day")
