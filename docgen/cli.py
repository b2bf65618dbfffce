"""The command-line reference, walked from the argparse trees of `lakeinlet-poll`, `lakeinlet-load`
and `lakeinlet` (what `--help` prints): per command its usage, description and own options; the
settings it takes are linked to the configuration page rather than repeated."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from docgen import GENERATED

WIDTH = "100"
"""argparse wraps usage lines to $COLUMNS: fixed, so the page does not depend on the terminal."""


@contextmanager
def _columns() -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def roots() -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(command, parser, configuration anchor prefix) of every command, in the page's order."""
    from lakeinlet.dev import cli as dev
    from lakeinlet.incremental import job as load
    from lakeinlet.jars import build_parser as jars_parser
    from lakeinlet.sources import job as poll

    polls = poll.parsers()
    out = [("lakeinlet-poll", polls[None], "poll")]
    out += [(f"lakeinlet-poll {name}", p, f"poll-{name}") for name, p in polls.items() if name]
    lakeinlet = dev.build_parser()
    sub = _subparsers(lakeinlet)
    if sub is not None:  # `lakeinlet jars` hands its arguments to lakeinlet.jars' own parser
        sub.choices["jars"] = jars_parser()
    return [*out, ("lakeinlet-load", load.build_parser(), "load"), ("lakeinlet", lakeinlet, "")]


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _anchor(command: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", command.lower()).strip("-")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option(parser: argparse.ArgumentParser, action: argparse.Action) -> tuple[str, str]:
    formatter = parser._get_formatter()
    flags = ", ".join(action.option_strings)
    if action.nargs != 0:
        flags += " " + formatter._format_args(action, action.dest.upper())
    return f"`{flags}`", _cell(formatter._expand_help(action) if action.help else "")


def _own(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options that are the command's own (not a configuration setting, not help, not hidden)."""
    return [a for a in parser._actions if a.option_strings and "__" not in a.dest
            and a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]


SHARED = ("aws", "log")
"""Sections a `lakeinlet-poll` subcommand shares with the poller: listed once, under the poller."""


def _section_anchor(prefix: str, section: str) -> str:
    if prefix.startswith("poll-") and section in SHARED:
        return f"poll-{section}"
    return f"{prefix}-{section}"


def _usage(parser: argparse.ArgumentParser) -> str:
    """The usage line with the command's own options only; `[settings]` stands for the rest."""
    if parser.usage:
        return parser.format_usage().strip()
    formatter = parser._get_formatter()
    mine = [a for a in parser._actions if "__" not in a.dest]
    formatter.add_usage(None, mine, parser._mutually_exclusive_groups)
    text = formatter.format_help().strip()
    return text + (" [settings]" if _settings(parser) else "")


def _settings(parser: argparse.ArgumentParser) -> list[str]:
    """The configuration sections whose flags this command's `--help` shows."""
    return [g.title for g in parser._action_groups if g.title and any(
        "__" in a.dest and a.help is not argparse.SUPPRESS for a in g._group_actions)]


def _command(command: str, parser: argparse.ArgumentParser, prefix: str, level: int) -> list[str]:
    head = "#" * min(level, 4)
    out = [f"{head} `{command}` {{#{_anchor(command)}}}", "", "```", _usage(parser), "```", ""]
    if parser.description and level > 2:
        out += [" ".join(parser.description.split()), ""]
    own = _own(parser)
    if own:
        out += ["| option | what it does |", "| --- | --- |"]
        out += [f"| {flag} | {text} |" for flag, text in (_option(parser, a) for a in own)]
        out.append("")
    sections = _settings(parser)
    if sections and prefix:
        links = ", ".join(f"[`{s}`](configuration.md#{_section_anchor(prefix, s)})" for s in sections)
        out += [f"Settings: {links} (flags, environment variables or `--config-file` keys).", ""]
    sub = _subparsers(parser)
    if sub is not None:
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        out += ["| command | what it does |", "| --- | --- |"]
        out += [f"| [`{name}`](#{_anchor(f'{command} {name}')}) | {_cell(helps.get(name, ''))} |"
                for name in sub.choices]
        out.append("")
        for name, child in sub.choices.items():
            out += _command(f"{command} {name}", child, prefix, level + 1)
    return out


def page() -> str:
    with _columns():
        lines = [GENERATED.format(source="the commands' argparse trees"), "# Command line", "",
                 "Three commands: `lakeinlet-poll` (the event source), `lakeinlet-load` (the incremental "
                 "loader) and `lakeinlet` (the local stack, jars, this reference). Each also answers "
                 "`--help`, which prints the same. Settings (most flags) are listed once, in the "
                 "[configuration reference](configuration.md); this page lists each command's own "
                 "options and links its settings.", ""]
        for command, parser, prefix in roots():
            lines += _command(command, parser, prefix, 2)
    return "\n".join(lines).rstrip() + "\n"
