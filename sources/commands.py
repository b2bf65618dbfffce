"""The `lakeinlet-poll` command line: one parser per command, generated from the field docs, with
the values of every choice flag and "required" where a setting must be given."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from lakeinlet.config import add_arguments, iter_fields, setting

PROG = "lakeinlet-poll"
COMMANDS = {"status": "queue depth, in-flight, DLQ depth and the changelog head"}
"""Subcommands (the first argument) and what each does; no subcommand polls."""


def required(doc: str, **kw: Any) -> Any:
    """A string setting without a default: it must come from a flag, the environment or the
    config file. Its doc starts "Required." (in `--help` and the README's reference); the
    section's `validate` reports it when missing (see `missing`)."""
    base = setting("", "Required. " + doc, **kw)
    return dataclasses.field(default="", metadata={**base.metadata, "required": True})


def missing(flag: str) -> str:
    """The problem reported for a required setting that was not given."""
    return f"{flag}: required (as the flag, its environment variable or in --config-file), found nothing"


def build_parser(config_cls: type, command: str | None, description: str,
                 usage: str | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """The parser of `lakeinlet-poll [command]`: --config-file plus one flag per setting."""
    parser = argparse.ArgumentParser(prog=f"{PROG} {command}" if command else PROG, usage=usage,
                                     description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config-file", metavar="TOML",
                        help="TOML file with [section] key = value settings (env LAKEINLET_CONFIG)")
    add_arguments(parser, config_cls)
    _describe_choices_and_required(parser, config_cls)
    return parser


def commands_epilog() -> str:
    lines = [f"  {name:<10}{text} ({PROG} {name} --help)" for name, text in COMMANDS.items()]
    return "commands:\n" + "\n".join(lines)


def _describe_choices_and_required(parser: argparse.ArgumentParser, config_cls: type) -> None:
    """Show a choice setting's values as its metavar and mark required settings. `add_arguments`
    is shared with the loader, whose help is changed elsewhere; argparse has no public list of a
    parser's actions, hence `_actions`."""
    fields = {f.dest: f for f in iter_fields(config_cls)}
    for action in parser._actions:
        f = fields.get(action.dest)
        if f is None:
            continue
        if f.meta.get("choices"):
            action.metavar = "{" + ",".join(f.meta["choices"]) + "}"
        if f.meta.get("required"):  # "(default: ; …)" would suggest an empty value works
            action.help = f"{f.meta['doc']} (env {f.env_names[0]})".replace("%", "%%")
