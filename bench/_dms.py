"""Change data as AWS DMS writes it to S3 (CSV `Op,ts,id,name,amount`): a full load of N keys, then
batches of changes (updates of live keys, inserts of new keys, deletes), for bench/merge.py."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

SCHEMA = "Op STRING, ts TIMESTAMP, id INT, name STRING, amount DOUBLE"
COLUMNS = ("Op", "ts", "id", "name", "amount")
T0 = datetime(2026, 11, 28, 10, 0, 0)
MIX = (("U", 0.7), ("I", 0.2), ("D", 0.1))
"""The share of updates, inserts and deletes in a batch of changes."""


def _csv(rows: list[tuple[str, int, int, str, float]]) -> bytes:
    """A DMS CSV object (`addColumnName=true`, `includeOpForFullLoad=true`, ts in microseconds)."""
    lines = ["Op,ts,id,name,amount"]
    for op, us, key, name, amount in rows:
        lines.append(f"{op},{(T0 + timedelta(microseconds=us)).strftime('%Y-%m-%d %H:%M:%S.%f')},"
                     f"{key},{name},{amount}")
    return ("\n".join(lines) + "\n").encode()


def _split(rows: list[tuple[str, int, int, str, float]], objects: int) -> Iterator[bytes]:
    step = -(-len(rows) // max(objects, 1))
    for i in range(0, len(rows), step):
        yield _csv(rows[i:i + step])


@dataclass
class Source:
    """The source table DMS replicates: its live keys, and the objects each step writes."""

    seed: int = 1
    live: list[int] = field(default_factory=list)
    next_id: int = 1
    clock: int = 0
    """Microseconds after T0 of the last change: every change is newer than the one before."""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def full_load(self, n: int, objects: int, prefix: str) -> list[tuple[str, bytes]]:
        """N inserts in key order (LOAD00000001.csv, …), as DMS's full load writes them."""
        rows = [("I", 0, k, f"name-{k}", float(k)) for k in range(self.next_id, self.next_id + n)]
        self.live += [r[2] for r in rows]
        self.next_id += n
        return [(f"{prefix}LOAD{i:08d}.csv", body) for i, body in enumerate(_split(rows, objects), 1)]

    def changes(self, m: int, objects: int, prefix: str) -> list[tuple[str, bytes]]:
        """M changes in commit order: a key may change more than once; a deleted key no more."""
        rows = [self._change() for _ in range(m)]
        return [(f"{prefix}{i:08d}.csv", body) for i, body in enumerate(_split(rows, objects), 1)]

    def _change(self) -> tuple[str, int, int, str, float]:
        self.clock += 1000
        op = self.rng.choices([o for o, _ in MIX], [w for _, w in MIX])[0]
        if op == "I" or not self.live:
            key, self.next_id = self.next_id, self.next_id + 1
            self.live.append(key)
            return "I", self.clock, key, f"new-{key}", float(key)
        at = self.rng.randrange(len(self.live))
        key = self.live[at]
        if op == "D":
            self.live[at] = self.live[-1]
            self.live.pop()
            return "D", self.clock, key, "", 0.0
        return "U", self.clock, key, f"upd-{key}-{self.clock}", self.rng.random() * 1000
