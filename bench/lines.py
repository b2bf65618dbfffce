"""Run one benchmark (default loader_throughput.py) once per Spark line, one line after the other, each in
its own virtualenv with its own jars, then print lakeinlet vs plain Spark per format and line, and each
line's times over the first line's. Figures, never asserted."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lakeinlet"
DEFAULT_VENVS = {"3.5": ROOT / ".venv", "4.1": ROOT / ".venv-spark4"}
DEFAULT_JARS = {"3.5": CACHE / "jars", "4.1": CACHE / "jars-spark4"}
BUILT_BY = {"3.5": "make install", "4.1": "make test-spark4"}
"""The make target that builds each line's virtualenv (and its jars), named when one is missing."""


@dataclass
class Run:
    line: str
    venv: Path
    jars: Path
    result: dict[str, Any] | None = None
    """The benchmark's --json output, None until it ran (and for a script that writes none)."""


def line_paths(pairs: list[str], flag: str) -> dict[str, Path]:
    """`["4.1=/x/venv"]` → `{"4.1": Path("/x/venv")}`: a path given here is taken from the working folder."""
    out: dict[str, Path] = {}
    for pair in pairs:
        line, sep, path = pair.partition("=")
        if not sep or not line or not path:
            raise SystemExit(f"lines.py: {flag} {pair!r}: expected LINE=PATH, e.g. {flag} 4.1=.venv-spark4")
        out[line] = Path(path).expanduser().absolute()
    return out


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str], list[Run]]:
    ap = argparse.ArgumentParser(
        description=__doc__, allow_abbrev=False,  # an abbreviation would swallow the benchmark's own flags
        epilog="Any other argument goes to the benchmark, e.g. --quick or --files 4 --rows 200.")
    ap.add_argument("--script", default="loader_throughput.py",
                    help="the benchmark: a file in bench/ or a path (default: %(default)s)")
    ap.add_argument("--venv", action="append", default=[], metavar="LINE=PATH",
                    help="a Spark line's virtualenv (default: " +
                         ", ".join(f"{k}={v.relative_to(ROOT)}" for k, v in DEFAULT_VENVS.items()) + ")")
    ap.add_argument("--jars", action="append", default=[], metavar="LINE=PATH",
                    help="a Spark line's jar folder (default: " +
                         ", ".join(f"{k}={v}" for k, v in DEFAULT_JARS.items()) + ")")
    args, rest = ap.parse_known_args(argv)
    if any(a == "--json" or a.startswith("--json=") for a in rest):
        ap.error("--json: lines.py gives each run a --json file of its own")
    venvs = DEFAULT_VENVS | line_paths(args.venv, "--venv")
    jars = DEFAULT_JARS | line_paths(args.jars, "--jars")
    if unknown := sorted(set(venvs) - set(jars)):
        ap.error(f"--jars: no jar folder for line {', '.join(unknown)}: add --jars {unknown[0]}=PATH")
    script = ROOT / "bench" / args.script
    args.script = script if script.is_file() else Path(args.script).absolute()
    if not args.script.is_file():
        ap.error(f"--script: {args.script} not found")
    ordered = sorted(venvs, key=lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.split(".")))
    return args, rest, [Run(line, venvs[line], jars[line]) for line in ordered]


def child_env(run: Run) -> dict[str, str]:
    """The environment of one line's run: its virtualenv's python for Spark's workers, its jars."""
    python = str(run.venv / "bin" / "python")
    env = os.environ | {"LAKEINLET_JARS": str(run.jars), "PYSPARK_PYTHON": python,
                        "PYSPARK_DRIVER_PYTHON": python, "VIRTUAL_ENV": str(run.venv),
                        "PATH": f"{run.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                        # piped output is block-buffered otherwise: the lines would arrive at the end
                        "PYTHONUNBUFFERED": "1"}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # pyspark starts the JVM from SPARK_HOME when it is set: one Spark install would serve every line.
    env.pop("SPARK_HOME", None)
    return env


def run_line(run: Run, script: Path, extra: list[str], tmp: Path) -> int:
    """Runs the benchmark in the line's virtualenv, streaming its output prefixed with the line;
    keeps its --json figures on `run`. Returns the exit code."""
    out = tmp / f"{run.line}.json"
    command = [str(run.venv / "bin" / "python"), str(script), *extra]
    if wants_json(script):
        command += ["--json", str(out)]
    print(f"[{run.line}] {' '.join(command)}", flush=True)
    with subprocess.Popen(command, cwd=ROOT, env=child_env(run), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for text in proc.stdout:
            print(f"[{run.line}] {text}", end="", flush=True)
    if proc.returncode == 0 and out.is_file():
        run.result = json.loads(out.read_text())
    return proc.returncode


def wants_json(script: Path) -> bool:
    """Whether the benchmark takes --json (read from its source: asking its --help would start a
    Python with pyspark for nothing)."""
    return '"--json"' in script.read_text()


def table(runs: list[Run]) -> list[str]:
    """Per format and line: plain s, loader s, loader/plain; on a later line, its loader and plain
    times over the first line's, for a format measured on both."""
    done = {r.line: r.result for r in runs if r.result}
    if not done:
        return []
    base = next(iter(done))
    by_format = {line: {f["format"]: f for f in res["formats"]} for line, res in done.items()}
    formats = list(dict.fromkeys(f for line in done for f in by_format[line]))
    vs = f"vs {base}"
    lines = [f"lakeinlet vs plain Spark per line ({vs}: this line's median time over {base}'s; "
             "below 1 is faster):"]
    for line, res in done.items():
        lines.append(f"  {line}: Spark {res['spark']}, {res['files']} files x {res['rows_per_object']} rows "
                     f"({res['mb']:.1f} MB), {res['pairs']} pairs, load average "
                     f"{res['load_average_start']:.2f} at start, {res['load_average_end']:.2f} at end")
    lines.append(f"{'format':<8} {'line':<5} {'plain s':>8} {'loader s':>9} {'loader/plain':>13} "
                 f"{'loader ' + vs:>15} {'plain ' + vs:>14}")
    for fmt in formats:
        for line in done:
            f = by_format[line].get(fmt)
            if f is None:
                continue
            row = (f"{fmt:<8} {line:<5} {f['plain_s']:>8.2f} {f['loader_s']:>9.2f} "
                   f"{f['loader_s'] / f['plain_s']:>12.2f}x")
            b = by_format[base].get(fmt)
            if line != base and b is not None:
                row += (f" {f['loader_s'] / b['loader_s']:>14.2f}x"
                        f" {f['plain_s'] / b['plain_s']:>13.2f}x")
            lines.append(row)
    return lines


def main(argv: list[str] | None = None) -> int:
    args, extra, runs = parse_args(argv)
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lakeinlet-lines-") as tmp:
        for run in runs:
            if not (run.venv / "bin" / "python").exists():
                hint = f" ({BUILT_BY[run.line]} builds it)" if run.line in BUILT_BY else ""
                print(f"[{run.line}] skipped: no virtualenv at {run.venv}{hint}", flush=True)
                continue
            code = run_line(run, args.script, extra, Path(tmp))
            if code:
                print(f"[{run.line}] failed: {args.script.name} exited with {code}", flush=True)
                failed.append(run.line)
            elif run.result and run.result["line"] != run.line:
                print(f"[{run.line}] note: that virtualenv runs Spark {run.result['spark']}, not "
                      f"{run.line}", flush=True)
    rows = table(runs)
    if rows:
        print("\n" + "\n".join(rows))
    if failed:
        print(f"failed on Spark {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
