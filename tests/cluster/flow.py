"""The standalone-cluster block of docs/deploy/standalone.md, parsed into the commands the cluster tier
runs: the tier substitutes only variables (and, for loads without the archive, the two options that
ship it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "deploy" / "standalone.md"
START, END = "<!-- cluster-flow:start -->", "<!-- cluster-flow:end -->"
ARCHIVE_OPT = "--archives lakeinlet-env.tar.gz#environment"
EXECUTOR_PY_ARCHIVE = "spark.pyspark.python=./environment/bin/python"
EXECUTOR_PY_VENV = 'spark.pyspark.python="$VENV/bin/python"'
VARIABLES = ("VENV", "MASTER", "QUEUE_URL", "BUCKET", "LAKE", "ICEBERG_CATALOG", "ICEBERG_CATALOG_URI")
"""What the block expects from its environment (the tier sets exactly these, plus the emulator's)."""


@dataclass(frozen=True)
class Flow:
    """The block's commands by role: the prelude (activate the venv, the PKG line) every script
    starts with, setup (pack the venv), the poll, one load per format."""

    prelude: tuple[str, ...]
    setup: tuple[str, ...]
    poll: str
    loads: dict[str, str]

    def load(self, target_format: str, archive: bool) -> str:
        """The load command of `target_format`, shipping the venv archive or not.

        Without the archive the executors run the venv's python by its absolute path (it exists at
        the same path on this one machine)."""
        cmd = self.loads[target_format]
        if archive:
            return cmd
        if cmd.count(ARCHIVE_OPT) != 1 or cmd.count(EXECUTOR_PY_ARCHIVE) != 1:
            raise ValueError(f"{PAGE}: the {target_format} load should name `{ARCHIVE_OPT}` and "
                             f"`{EXECUTOR_PY_ARCHIVE}` once each (the tier swaps them), found:\n{cmd}")
        cmd = re.sub(r"[ \t]*" + re.escape(ARCHIVE_OPT) + r"[ \t]*\\\n", "", cmd)
        return cmd.replace(EXECUTOR_PY_ARCHIVE, EXECUTOR_PY_VENV)

    def script(self, *commands: str) -> str:
        """A bash script running `commands` after the prelude, stopping at the first failure."""
        return "set -euo pipefail\n" + "\n".join([*self.prelude, *commands]) + "\n"


def block(text: str | None = None) -> str:
    text = PAGE.read_text(encoding="utf-8") if text is None else text
    body = text.split(START, 1)[1].split(END, 1)[0].strip()
    return re.sub(r"^```\w*\n|\n```$", "", body).strip() + "\n"


def commands(text: str | None = None) -> list[str]:
    """The block's commands, each with its continuation lines (`\\` + newline kept, as typed)."""
    out: list[str] = []
    current = ""
    for line in block(text).splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line + "\n"
        if not line.endswith("\\"):
            out.append(current.rstrip("\n"))
            current = ""
    if current:
        raise ValueError(f"{PAGE}: the cluster-flow block ends inside a continued command: {current!r}")
    return out


def parse(text: str | None = None) -> Flow:
    """Split the block by role; raises ValueError naming what is missing or repeated."""
    cmds = commands(text)
    prelude = [c for c in cmds if c.startswith(("PKG=", ". ", "source "))]
    polls = [c for c in cmds if "sources/__main__.py" in c]
    loads = [c for c in cmds if "incremental/__main__.py" in c]
    setup = [c for c in cmds if c not in prelude + polls + loads]
    by_format: dict[str, str] = {}
    for cmd in loads:
        fmt = m.group(1) if (m := re.search(r"--target-format (\w+)", cmd)) else "delta"
        if fmt in by_format:
            raise ValueError(f"{PAGE}: two load commands for {fmt} in the cluster-flow block")
        by_format[fmt] = cmd
    if len(polls) != 1 or sorted(by_format) != ["delta", "hudi", "iceberg"]:
        raise ValueError(f"{PAGE}: expected one poll and one load per format in the cluster-flow "
                         f"block, found {len(polls)} and {sorted(by_format)}")
    return Flow(tuple(prelude), tuple(setup), polls[0], by_format)
