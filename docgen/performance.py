"""The performance page: the prose of docgen/performance.md around one table per benchmark run,
generated from the runs' `--json` output kept in bench/results/ (each with its machine, date and load)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docgen import GENERATED, ROOT

RESULTS = ROOT / "bench" / "results"
TEMPLATE = Path(__file__).with_name("performance.md")
SECTIONS = ("Event source", "Loader", "Landing zone", "MERGE")
HEADER_KEYS = ("benchmark", "command", "section", "machine", "date", "load", "rows")


def runs(folder: Path = RESULTS) -> list[dict[str, Any]]:
    """Every run's document, by section then date.

    Raises:
        ValueError: a document lacks one of HEADER_KEYS or names an unknown section.
    """
    out = []
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in HEADER_KEYS if k not in doc]
        if missing or doc["section"] not in SECTIONS:
            raise ValueError(f"{path}: expected {', '.join(HEADER_KEYS)} and a section of {SECTIONS}, "
                             f"found {sorted(doc)} (section {doc.get('section')!r})")
        out.append(doc | {"file": path.name})
    return sorted(out, key=lambda d: (SECTIONS.index(d["section"]), d["date"], d["file"]))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|") or "–"


def run_table(doc: dict[str, Any]) -> list[str]:
    """One run: its header line (benchmark, command, machine, date, load), its rows, its note."""
    lines = [f"### `{doc['benchmark']}`, {doc['date']}", "",
             f"`{doc['command']}` · machine: {doc['machine']} · load average: {doc['load']} · "
             f"data: `bench/results/{doc['file']}`", "",
             "| what | lakeinlet | baseline, same run | ratio |", "| --- | --- | --- | --- |"]
    lines += [f"| {_cell(r['what'])} | {_cell(r['lakeinlet'])} | {_cell(r['baseline'])} | "
              f"{_cell(r.get('ratio', ''))} |" for r in doc["rows"]]
    return [*lines, "", *([f"*{doc['note']}*", ""] if doc.get("note") else [])]


def page() -> str:
    body: list[str] = []
    docs = runs()
    for section in SECTIONS:
        body += [f"## {section}", ""]
        for doc in (d for d in docs if d["section"] == section):
            body += run_table(doc)
    text = TEMPLATE.read_text(encoding="utf-8").replace("{{runs}}", "\n".join(body).rstrip())
    return GENERATED.format(source="bench/results/*.json and docgen/performance.md") + "\n" + text
