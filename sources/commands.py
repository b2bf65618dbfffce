"""The `lakeinlet-poll` command line: one parser per command, generated from the field docs."""

from __future__ import annotations

import argparse

from lakeinlet.config import add_arguments

PROG = "lakeinlet-poll"
COMMANDS = {"status": "queue depth, in-flight, DLQ depth and the changelog head",
            "maintain": "compact the changelog, checkpoint its log, vacuum what no loader needs"}
"""Subcommands (the first argument) and what each does; no subcommand polls."""
USAGES = {"status": f"{PROG} status --queue-url URL [options]",
          "maintain": f"{PROG} maintain --changelog URI (--loader-table URI ... | "
                      "--loader-position VERSION ... | --no-loaders) [options]"}


def build_parser(config_cls: type, command: str | None, description: str,
                 usage: str | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """The parser of `lakeinlet-poll [command]`: --config-file plus one flag per setting."""
    parser = argparse.ArgumentParser(prog=f"{PROG} {command}" if command else PROG, usage=usage,
                                     description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config-file", metavar="TOML",
                        help="TOML file with [section] key = value settings (env LAKEINLET_CONFIG)")
    add_arguments(parser, config_cls)
    return parser


def commands_epilog() -> str:
    lines = [f"  {name:<10}{text} ({PROG} {name} --help)" for name, text in COMMANDS.items()]
    return "commands:\n" + "\n".join(lines)
