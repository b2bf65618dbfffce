"""Configuration: frozen dataclass sections whose field docs generate `--help`, resolved from CLI
flags, then the environment (`LAKEINLET__SECTION__KEY`), then a TOML file (`[section] key = value`),
then defaults; every problem is reported together, once, at start-up."""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from lakeinlet.errors import ConfigError
from lakeinlet.redact import redact

C = TypeVar("C")
ENV_PREFIX = "LAKEINLET__"


def setting(default: Any, doc: str, *, flag: str | None = None, env: str | None = None,
            choices: tuple[str, ...] | None = None, metavar: str | None = None,
            required: bool = False, split: bool = True) -> Any:
    """Declare one config field: its default, the doc shown by `--help`, and optional names.

    Args:
        default: the default value (a tuple for list settings).
        doc: what the setting does and its operational effect; shown in `--help`.
        flag: the CLI flag, default `--<field-name-with-dashes>`.
        env: an extra environment variable honoured as well (e.g. `AWS_ENDPOINT_URL`).
        choices: the allowed values for a string setting.
        metavar: the placeholder shown in `--help`.
        required: it has no usable default: `--help` says "Required." and shows no default (the
            section's `validate` reports it when missing, see `missing`).
        split: a list setting's values are comma lists too (off when a value holds commas itself).
    """
    meta = {"doc": ("Required. " + doc) if required else doc, "flag": flag, "env": env,
            "choices": choices, "metavar": metavar, "required": required, "split": split}
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class _Field:
    section: str
    name: str
    kind: type
    optional: bool
    is_tuple: bool
    default: Any
    meta: Mapping[str, Any]

    @property
    def dest(self) -> str:
        return f"{self.section}__{self.name}"

    @property
    def flag(self) -> str:
        return str(self.meta.get("flag") or "--" + self.name.replace("_", "-"))

    @property
    def env_names(self) -> list[str]:
        names = [f"{ENV_PREFIX}{self.section.upper()}__{self.name.upper()}"]
        if self.meta.get("env"):
            names.append(str(self.meta["env"]))
        return names


def _unwrap(hint: Any) -> tuple[type, bool, bool]:
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional, hint = True, args[0]
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0], optional, True
    return hint, optional, False


def iter_fields(config_cls: type) -> list[_Field]:
    """Every setting of a config class, section by section, in declaration order."""
    out = []
    for sec in dataclasses.fields(config_cls):
        sec_cls = typing.get_type_hints(config_cls)[sec.name]
        hints = typing.get_type_hints(sec_cls)
        for f in dataclasses.fields(sec_cls):
            kind, optional, is_tuple = _unwrap(hints[f.name])
            out.append(_Field(sec.name, f.name, kind, optional, is_tuple, f.default, f.metadata))
    return out


def add_arguments(parser: argparse.ArgumentParser, config_cls: type,
                  sections: tuple[str, ...] | None = None) -> None:
    """Add one flag per setting, grouped by section, with help text from the field docs.

    Args:
        sections: only these sections' flags are shown in `--help` (a subcommand shows what it
            uses); the others are still accepted, so one set of flags works for every command.
    """
    redact_errors(parser)
    groups: dict[str, Any] = {}
    for f in iter_fields(config_cls):
        hidden = sections is not None and f.section not in sections
        group = parser if hidden else groups.get(f.section)
        if group is None:
            doc = (typing.get_type_hints(config_cls)[f.section].__doc__ or "").strip()
            group = groups[f.section] = parser.add_argument_group(f.section, doc.split("\n")[0])
        choices = f.meta.get("choices")
        default = "" if f.meta.get("required") else f"default: {_show(f.default)}; "
        help_text = f"{f.meta['doc']} ({default}env {f.env_names[0]}"
        help_text += f" or {f.env_names[1]})" if len(f.env_names) > 1 else ")"
        kwargs: dict[str, Any] = {"dest": f.dest, "default": argparse.SUPPRESS,
                                  "help": argparse.SUPPRESS if hidden else help_text.replace("%", "%%")}
        if f.kind is bool:
            # a flag that is itself a negation (--no-loaders) gets no --no-no- twin: argparse's
            # BooleanOptionalAction would read any --no- flag as False
            kwargs["action"] = "store_true" if f.flag.startswith("--no-") else argparse.BooleanOptionalAction
        else:
            kwargs["metavar"] = ("{" + ",".join(choices) + "}" if choices else None) \
                or f.meta.get("metavar") or f.name.upper()
            kwargs["type"] = str
            if f.is_tuple:
                kwargs["action"] = "append"
        group.add_argument(f.flag, **kwargs)


def redact_errors(parser: argparse.ArgumentParser) -> None:
    """Make `parser` redact its usage errors: argparse quotes what it could not parse (an unknown
    `--catalog-urii=jdbc:postgresql://user:password@…`, a value outside its choices) verbatim."""
    error = parser.error

    def redacted(message: str) -> NoReturn:
        error(redact(message))

    parser.error = redacted  # type: ignore[method-assign]


def missing(flag: str) -> str:
    """The problem reported for a required setting that was not given."""
    return f"{flag}: required (as the flag, its environment variable or in --config-file), found nothing"


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def convert(f: _Field, raw: Any, problems: list[str], origin: str) -> Any:
    """`raw` (a flag's, variable's or TOML value) as the setting's type; a bad value is added to
    `problems` (naming `origin`) and the default returned."""
    if raw is None:
        return None
    if f.is_tuple:
        items = list(raw) if isinstance(raw, list | tuple) else [raw]
        if f.meta.get("split", True):
            items = [p for item in items for p in str(item).split(",")]
        parts = [str(p) for p in items if str(p).strip()]
        return tuple(_scalar(f, p.strip(), problems, origin) for p in parts)
    return _scalar(f, raw, problems, origin)


def _scalar(f: _Field, raw: Any, problems: list[str], origin: str) -> Any:
    if isinstance(raw, f.kind) and not (f.kind is int and isinstance(raw, bool)):
        value = raw
    elif f.kind is bool:
        text = str(raw).strip().lower()
        if text not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
            problems.append(f"{f.flag} ({origin}): expected true or false, found {raw!r}")
            return f.default
        value = text in ("1", "true", "yes", "on")
    else:
        try:
            value = f.kind(raw)
        except (TypeError, ValueError):
            problems.append(f"{f.flag} ({origin}): expected {f.kind.__name__}, found {raw!r}")
            return f.default
    choices = f.meta.get("choices")
    if choices and value not in choices:
        problems.append(f"{f.flag} ({origin}): expected one of {', '.join(choices)}, found {value!r}")
    return value


def resolve(config_cls: type[C], args: argparse.Namespace | None = None,
            environ: Mapping[str, str] | None = None, toml_path: str | None = None,
            also: Sequence[type] = ()) -> C:
    """Build the config from flags, environment, TOML and defaults, and validate it.

    Args:
        also: the config classes of the job's other commands: their sections and keys are not
            unknown in the TOML file (one file serves every command of a job).

    Raises:
        ConfigError: listing every problem found (unknown TOML sections or keys, bad values and
            failed validations).
    """
    environ = os.environ if environ is None else environ
    cli = vars(args) if args is not None else {}
    path = toml_path or cli.get("config_file") or environ.get("LAKEINLET_CONFIG")
    toml = _load_toml(path)
    problems = unknown_settings(toml, [config_cls, *also], str(path))
    values: dict[str, dict[str, Any]] = {}
    for f in iter_fields(config_cls):
        if f.dest in cli:
            raw, origin = cli[f.dest], "flag"
        elif env_name := next((n for n in f.env_names if environ.get(n)), None):
            raw, origin = environ[env_name], env_name
        elif f.name in toml.get(f.section, {}):
            raw, origin = toml[f.section][f.name], "config file"
        else:
            values.setdefault(f.section, {})[f.name] = f.default
            continue
        values.setdefault(f.section, {})[f.name] = convert(f, raw, problems, origin)
    hints = typing.get_type_hints(config_cls)
    sections = {name: hints[name](**kw) for name, kw in values.items()}
    config = config_cls(**sections)
    for section in sections.values():
        validate = getattr(section, "validate", None)
        if validate is not None:
            problems.extend(validate())
    validate_all = getattr(config, "validate", None)
    if validate_all is not None:
        problems.extend(validate_all())
    if problems:
        raise ConfigError(problems)
    return config


def unknown_settings(toml: Mapping[str, Any], classes: Sequence[type], path: str) -> list[str]:
    """One line per TOML section or key that no setting of `classes` reads, with the nearest name."""
    known: dict[str, set[str]] = {}
    for cls in classes:
        for f in iter_fields(cls):
            known.setdefault(f.section, set()).add(f.name)
    out = []
    for section, body in toml.items():
        if not isinstance(body, dict):
            out.append(f"config file {path}: {section} is outside any [section]: settings are "
                       f"`[section] key = value`{_nearest(section, known, None)}")
        elif section not in known:
            near = difflib.get_close_matches(section, sorted(known), n=1)
            hint = f"did you mean [{near[0]}]?" if near else f"sections: {', '.join(sorted(known))}"
            out.append(f"config file {path}: unknown section [{section}] ({hint})")
        else:
            out += [f"config file {path}: unknown key {key} in [{section}]{_nearest(key, known, section)}"
                    for key in body if key not in known[section]]
    return out


def _nearest(key: str, known: Mapping[str, set[str]], section: str | None) -> str:
    """" (did you mean …?)": the section the key belongs in, else the closest key of `section`."""
    name = key.replace("-", "_")
    homes = sorted(s for s, names in known.items() if name in names and s != section)
    if homes and (section is None or name not in known[section]):
        return f" (did you mean [{homes[0]}] {name}?)"
    near = difflib.get_close_matches(name, sorted(known[section]) if section else [], n=1)
    return f" (did you mean {near[0]}?)" if near else ""


def _load_toml(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError([f"config file {path}: not found"]) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"config file {path}: not valid TOML: {exc}"]) from exc


def reference_markdown(config_cls: type, title: str, sections: tuple[str, ...] | None = None) -> str:
    """The configuration reference of one job as a Markdown table (for the docs); `sections`:
    only those sections' settings."""
    lines = [f"#### {title}", "", "| flag | environment | default | what it does |",
             "| --- | --- | --- | --- |"]
    for f in iter_fields(config_cls):
        if sections is not None and f.section not in sections:
            continue
        envs = " / ".join(f"`{n}`" for n in f.env_names)
        doc = str(f.meta["doc"]).replace("|", "\\|")
        default = "required" if f.meta.get("required") else f"`{_show(f.default)}`"
        lines.append(f"| `{f.flag}` | {envs} | {default} | {doc} |")
    return "\n".join(lines) + "\n"
