"""Generated reference pages made of tables: configuration (the jobs' settings), ledger statuses and
exit codes."""

from __future__ import annotations

import dataclasses
import re
import typing

from docgen import GENERATED

CONFIG_INTRO = """# Configuration

Every setting is a flag, an environment variable `LAKEINLET__<SECTION>__<KEY>`, or a key of a TOML
file (`--config-file FILE` or `LAKEINLET_CONFIG`, as `[section] key = value`), in that order of
precedence, then the default. Every problem is reported together, once, at start-up (exit code 2).
Credentials are never settings: they come from the AWS default chain. List settings take the flag
again or a comma list.

```toml
# lakeinlet-load --config-file load.toml
[tables]
changelog = "s3://lake/changelog"
table = "s3://lake/orders"
[read]
source_format = "csv"
read_option = ["header=true"]
```
"""


def _sections(config_cls: type) -> list[tuple[str, str]]:
    """(section name, the first line of its docstring) of a job's config class, in order."""
    hints = typing.get_type_hints(config_cls)
    return [(f.name, (hints[f.name].__doc__ or "").strip().split("\n")[0])
            for f in dataclasses.fields(config_cls)]


def _job(config_cls: type, title: str, anchor: str, only: tuple[str, ...] | None = None,
         note: str = "") -> list[str]:
    from lakeinlet.config import reference_markdown

    out = [f"## {title} {{#{anchor}}}", ""] + ([note, ""] if note else [])
    for name, doc in _sections(config_cls):
        if only is not None and name not in only:
            continue
        table = _breakable(reference_markdown(config_cls, "", (name,)).split("\n", 2)[2])
        out += [f"### `{name}` {{#{anchor}-{name}}}", "", doc, "", table.rstrip(), ""]
    return out


def _breakable(table: str) -> str:
    """Each `LAKEINLET__SECTION__KEY` as HTML code that may wrap after a `__` and nowhere else (a
    table column of them stays narrow; docs/stylesheets/extra.css keeps it from wrapping mid-word)."""
    return re.sub(r"`(LAKEINLET__\w+)`",
                  lambda m: "<code>" + m[1].replace("__", "__<wbr>") + "</code>", table)


def configuration() -> str:
    """The settings of every job, by section, from the field docs (the generator behind
    `lakeinlet config-reference`)."""
    from lakeinlet.incremental.settings import LoaderConfig
    from lakeinlet.sources.settings import MaintainConfig, SourceConfig, StatusConfig

    lines = [GENERATED.format(source="the settings' field docs (lakeinlet/config.py's `setting`)"),
             CONFIG_INTRO]
    lines += _job(SourceConfig, "Event source (`lakeinlet-poll`)", "poll")
    lines += _job(MaintainConfig, "Changelog maintenance (`lakeinlet-poll maintain`)", "poll-maintain",
                  ("maintain",), "The `aws` and `log` settings are those of `lakeinlet-poll` above.")
    lines += _job(StatusConfig, "Queue status (`lakeinlet-poll status`)", "poll-status", ("status",),
                  "The `aws` and `log` settings are those of `lakeinlet-poll` above.")
    lines += _job(LoaderConfig, "Incremental loader (`lakeinlet-load`)", "load",
                  note="Every `lakeinlet-load` command accepts every setting; each command's `--help` "
                       "shows the sections it uses ([command line](cli.md)).")
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def ledger_statuses() -> str:
    from lakeinlet.incremental.model import FINAL, STATUSES
    from lakeinlet.incremental.statuses import MEANINGS

    lines = [GENERATED.format(source="incremental/statuses.py and incremental/model.py"),
             "# Ledger statuses", "",
             "The ingest ledger (`<table>_ledger`, a Delta table beside each target) holds one row per "
             "object version the loader planned: its status, a reason, the target version and rows. "
             "**Final** statuses are never planned again for the same version (version id, else "
             "etag); the others are planned again when an event for the object comes again (a new "
             "notification, a [backfill](../guides/backfill-reset.md), or a reset).", "",
             "| status | final | what it means | what to do |", "| --- | --- | --- | --- |"]
    for status in STATUSES:
        meaning, action = MEANINGS[status]
        final = "yes" if status in FINAL else "no"
        lines.append(f"| `{status}` | {final} | {_cell(meaning)} | {_cell(action)} |")
    return "\n".join(lines) + "\n"


def exit_codes() -> str:
    from lakeinlet.exit_codes import CODES

    lines = [GENERATED.format(source="lakeinlet/exit_codes.py"), "# Exit codes", "",
             "Every command of lakeinlet exits with one of these; the jobs print one line on stderr "
             "for every non-zero code but 1 (which logs a traceback). A supervisor (systemd, "
             "Kubernetes, an EMR step) may restart on 1, and should alert rather than loop on 2.", "",
             "| code | name | what it means | what to do | returned by |", "| --- | --- | --- | --- | --- |"]
    for c in CODES:
        commands = ", ".join(f"`{x}`" for x in c.commands)
        lines.append(f"| {c.code} | {c.name} | {_cell(c.meaning)} | {_cell(c.action)} | {commands} |")
    return "\n".join(lines) + "\n"


def status_json() -> str:
    """The keys of `lakeinlet-load status --json` and `lakeinlet-poll status --json`."""
    from lakeinlet.incremental.commands.status_json import FIELDS as LOAD
    from lakeinlet.sources.status import FIELDS as POLL

    lines = [GENERATED.format(source="`FIELDS` in incremental/commands/status_json.py and sources/status.py"),
             "# Status as JSON", "",
             "`lakeinlet-load status --json` prints one JSON object per route, one a line (a single "
             "table is one object whose `route` is `\"\"`); `lakeinlet-poll status --json` prints one "
             "object for its queue. Every key is always present; null means not known or not "
             "configured. Times are ISO 8601 in UTC; durations are seconds. See "
             "[status](../operate/status.md) for the text form of the same numbers.", ""]
    for title, fields in (("`lakeinlet-load status --json`", LOAD), ("`lakeinlet-poll status --json`", POLL)):
        lines += [f"## {title}", "", "| key | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{name}` | {kind} | {_cell(meaning)} |" for name, kind, meaning in fields]
        lines.append("")
    return "\n".join(lines)
