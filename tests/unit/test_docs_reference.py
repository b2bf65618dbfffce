"""The docs' generated pages are what the code generates now (`make docs` rewrites them), and the
declarations they are generated from hold the code to them: every ledger status has a meaning, every
exit code a command returns is declared, every log event's name can be read from the source."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

import docgen
from docgen import cli, events, performance
from lakeinlet import exit_codes
from lakeinlet.incremental.model import STATUSES
from lakeinlet.incremental.statuses import MEANINGS

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("page", sorted(docgen.pages()))
def test_generated_page_is_current(page: str) -> None:
    t0 = time.monotonic()
    text = docgen.pages()[page]()
    print(f"{page}: generated in {time.monotonic() - t0:.2f} s")
    assert (docgen.DOCS / page).read_text(encoding="utf-8") == text, f"docs/{page} is stale: run `make docs`"


def test_every_ledger_status_has_a_meaning() -> None:
    assert list(MEANINGS) == list(STATUSES)


def _returned_codes(path: Path) -> set[int]:
    """Integer literals a module returns or raises SystemExit with."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        value = node.value if isinstance(node, ast.Return) else None
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "SystemExit" and node.args:
            value = node.args[0]
        if isinstance(value, ast.Constant) and type(value.value) is int:
            out.add(value.value)
    return out


@pytest.mark.parametrize("command", sorted(exit_codes.MODULES))
def test_exit_codes_a_command_returns_are_declared(command: str) -> None:
    found = set().union(*(_returned_codes(ROOT / path) for path in exit_codes.MODULES[command]))
    assert found == exit_codes.codes_of(command), (
        f"{command} returns {sorted(found)}; lakeinlet/exit_codes.py declares "
        f"{sorted(exit_codes.codes_of(command))}: declare the new code (its meaning and commands)")


def test_log_events_are_found_with_their_fields() -> None:
    found = events.scan()
    assert {"batch", "summary", "set aside", "route failed", "poison"} <= set(found)
    assert found["batch"].levels == {"INFO", "WARNING"}  # the poller's batch line warns on poison
    assert "changelog_to" in found["batch"].fields and found["batch"].open_fields  # `route` with routes
    assert found["poison"].loggers == {"lakeinlet.sources.poller"}


def test_an_event_name_the_scan_cannot_read_fails_loudly(tmp_path: Path) -> None:
    (tmp_path / "lakeinlet").mkdir()
    (tmp_path / "sources").mkdir()
    (tmp_path / "incremental").mkdir()
    (tmp_path / "lakeinlet" / "x.py").write_text(
        "import logging\nlog = logging.getLogger('x')\ndef f(n):\n    logs.event(log, n)\n")
    with pytest.raises(ValueError, match=r"lakeinlet/x.py:4: an event name the docs cannot read"):
        events.scan(tmp_path)


def test_cli_page_walks_every_subcommand() -> None:
    text = cli.page()
    for command in ("lakeinlet-poll maintain", "lakeinlet-load checkpoint reset", "lakeinlet-load cleanup",
                    "lakeinlet local up", "lakeinlet jars"):
        assert f"`{command}` {{#" in text, command
    assert "`--to-version N`" in text and "[`tables`](configuration.md#load-tables)" in text


def test_every_performance_run_names_its_machine_date_and_load() -> None:
    runs = performance.runs()
    assert runs and all(r["machine"] and r["date"] and r["load"] and r["rows"] for r in runs)


def test_a_run_without_its_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"benchmark": "poller.py", "rows": []}')
    with pytest.raises(ValueError, match="expected benchmark, command, section, machine, date, load"):
        performance.runs(tmp_path)


def test_a_benchmarks_json_output_is_a_performance_run(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    from report import Run  # bench/report.py: what every benchmark's --json writes

    run = Run("Loader", ["loader_listing.py", "--json", "out.json", "--quick"])
    run.row("100 new objects under a prefix that holds 1,000", "the loader: 1.20 s", "the stream: 2.40 s",
            "2.00x", loader_s=1.2)
    run.write(str(tmp_path / "2026-11-27-listing.json"))
    (doc,) = performance.runs(tmp_path)
    assert doc["command"] == "python bench/loader_listing.py --quick" and "cores" in doc["machine"]
    assert " at the start, " in doc["load"]
    assert doc["figures"]["100 new objects under a prefix that holds 1,000"] == {"loader_s": 1.2}
    table = "\n".join(performance.run_table(doc))
    assert "load average: " in table and "| the loader: 1.20 s | the stream: 2.40 s | 2.00x |" in table


def test_every_benchmark_takes_json() -> None:
    """Each bench/ script takes --json, so a new run of any of them can become a table of the performance
    page; not its helpers (_*.py, *_common.py, report.py, lines.py and smoke.py which run others,
    wide_samples.py) nor loader_profile.py (a breakdown of one batch's steps and stages, not figures
    beside a baseline)."""
    helpers = {"report.py", "lines.py", "smoke.py", "wide_samples.py", "loader_profile.py"}
    scripts = [p for p in sorted((ROOT / "bench").glob("*.py"))
               if not p.name.startswith("_") and not p.stem.endswith("_common") and p.name not in helpers]
    lacking = [p.name for p in scripts
               if "add_json_flag(" not in (text := p.read_text(encoding="utf-8")) and '"--json"' not in text]
    assert not lacking, f"benchmarks without --json: {lacking}"
    for doc in performance.runs():  # and every run the page shows came from one of them, or says so
        assert doc["benchmark"] in {p.name for p in scripts} or "source" in doc, doc["file"]
