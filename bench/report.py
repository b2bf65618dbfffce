"""A benchmark run's `--json PATH` document: one header (benchmark, command, machine, date, load at the
start and at the end) and the run's table rows (what, lakeinlet, baseline measured in the same run,
ratio), plus its raw figures. Kept in bench/results/, such files are what docs/operate/performance.md
is generated from (`make docs`); the header is taken when the run starts and when it is written."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="also write the run's header (machine, date, load) and figures to PATH as "
                             "JSON (bench/results/ holds those the docs' performance page shows)")


def _memory_gib() -> float:
    try:
        kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        return 0.0
    return kib / 1024 / 1024


def machine() -> str:
    """The machine a run measured: cores, memory, OS and Python."""
    return (f"{os.cpu_count()} cores, {_memory_gib():.0f} GiB, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}")


def _without_json(args: list[str]) -> list[str]:
    """The arguments but `--json PATH` (where a run wrote its figures is not part of how it ran)."""
    out, skip = [], False
    for arg in args:
        if not skip and arg != "--json" and not arg.startswith("--json="):
            out.append(arg)
        skip = arg == "--json"
    return out


def _load() -> float:
    return round(os.getloadavg()[0], 1)


class Run:
    """One run of one benchmark: rows added as the run prints them, written once at its end."""

    def __init__(self, section: str, argv: list[str] | None = None) -> None:
        argv = sys.argv if argv is None else argv
        self.benchmark = Path(argv[0]).name
        self.command = "python bench/" + " ".join([self.benchmark, *_without_json(argv[1:])])
        self.section, self.start_load = section, _load()
        self.date = datetime.now(UTC).strftime("%Y-%m-%d")
        self.rows: list[dict[str, str]] = []
        self.figures: dict[str, Any] = {}
        self.notes: list[str] = []

    def row(self, what: str, lakeinlet: str, baseline: str, ratio: str = "", **figures: Any) -> None:
        """One line of the run's table; `figures`: its numbers, kept beside it for machines."""
        self.rows.append({"what": what, "lakeinlet": lakeinlet, "baseline": baseline, "ratio": ratio})
        self.figures[what] = figures

    def note(self, text: str) -> None:
        self.notes.append(text)

    def document(self) -> dict[str, Any]:
        doc = {"benchmark": self.benchmark, "command": self.command, "section": self.section,
               "machine": machine(), "date": self.date,
               "load": f"{self.start_load} at the start, {_load()} at the end",
               "rows": self.rows, "figures": self.figures}
        return doc | ({"note": " ".join(self.notes)} if self.notes else {})

    def write(self, path: str | None) -> None:
        """Write the document to `path` (nothing when None: the run was not asked for --json)."""
        if path:
            Path(path).write_text(json.dumps(self.document(), indent=2, ensure_ascii=False) + "\n")
            print(f"figures written to {path}")
