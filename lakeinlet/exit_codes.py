"""The exit codes of lakeinlet's commands, declared once: what each means and which commands return
it. The docs' exit-code page is generated from this table, and a unit test holds the commands' own
`return` statements to it (tests/unit/test_docs_reference.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExitCode:
    """One exit code: its number, a name, what it means, what to do, and the commands returning it."""

    code: int
    name: str
    meaning: str
    action: str
    commands: tuple[str, ...]


JOBS = ("lakeinlet-poll", "lakeinlet-load")
TOOLS = ("lakeinlet", "lakeinlet jars")

CODES = (
    ExitCode(0, "ok", "The command did what it was asked: a drain or run ended normally, or was stopped "
             "on request (SIGTERM/SIGINT) after its current batch; a dry run printed its plan.",
             "Nothing.", (*JOBS, *TOOLS)),
    ExitCode(1, "unexpected", "An error lakeinlet did not expect (a bug, or a failure no adapter "
             "translates); the traceback is logged. Every batch is atomic, so nothing is half-written: "
             "the next run repairs what the crashed one left (ledger rows, orphan files). For "
             "`lakeinlet local`: the emulator did not start, or (`status`) no local stack is running.",
             "Rerun; report the traceback if it repeats.", (*JOBS, "lakeinlet")),
    ExitCode(2, "terminal", "A configuration error (every problem listed together, once, at start-up), "
             "or a terminal error: something a retry cannot fix (a location that does not exist or "
             "cannot be written, a queue never reached within --connect-timeout-seconds, a Spark line "
             "without the target format, a missing jar, a schema conflict with --on-type-conflict fail, "
             "a `maintain` that kept losing to loader commits). One line says what was expected and "
             "what was found.",
             "Fix what the line names; a supervisor should not restart the job in a loop on this code.",
             (*JOBS, *TOOLS)),
    ExitCode(3, "routes failed", "`lakeinlet-load run --routes`: one or more routes failed (each named "
             "on stderr and in its `route failed` log event); every other route committed its batches.",
             "Fix the named routes' tables or settings; rerunning loads only what is left.",
             ("lakeinlet-load",)),
)
"""Every exit code, in order."""

LOAD_COMMANDS = ("backfill", "checkpoint_command", "cleanup", "maintain", "run", "status", "vacuum")
MODULES: dict[str, tuple[str, ...]] = {
    "lakeinlet-poll": ("sources/job.py",),
    "lakeinlet-load": ("incremental/job.py", "incremental/console.py",
                       *(f"incremental/commands/{m}.py" for m in LOAD_COMMANDS)),
    "lakeinlet": ("lakeinlet/dev/cli.py",), "lakeinlet jars": ("lakeinlet/jars.py",)}
"""Where each command's `return` statements are (paths in the source tree: the parser and dispatch,
and the modules holding its command bodies)."""


def codes_of(command: str) -> set[int]:
    """The exit codes `command` may return."""
    return {c.code for c in CODES if command in c.commands}
