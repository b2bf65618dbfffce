"""The log-event reference, found in the source: every structured event the jobs log
(`logs.event(logger, NAME, level, **fields)`, and the poison log's `.event(NAME, level, **fields)`),
with its logger, level, fields and the modules that log it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from docgen import GENERATED, ROOT

FOLDERS = {"lakeinlet": "lakeinlet", "sources": "lakeinlet.sources", "incremental": "lakeinlet.incremental"}
"""Source folders → their package (setuptools' package-dir map)."""
WRAPPERS = {("lakeinlet/logs.py", "event"), ("sources/poison.py", "event")}
"""Functions that log an event whose name their caller gives: their own call is no event."""
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass
class Event:
    name: str
    loggers: set[str] = field(default_factory=set)
    levels: set[str] = field(default_factory=set)
    fields: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)
    open_fields: bool = False
    """Some call passes `**mapping`: it may carry more fields (e.g. `route`)."""


def _loggers(tree: ast.Module, module: str) -> dict[str, str]:
    """Module-level `name = logging.getLogger(...)` → the logger's name."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                ast.unparse(node.value.func) == "logging.getLogger" and node.value.args:
            arg = node.value.args[0]
            name = arg.value if isinstance(arg, ast.Constant) else module
            out |= {ast.unparse(t): str(name) for t in node.targets}
    return out


def _constants(tree: ast.Module) -> dict[str, str]:
    return {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for t in n.targets if isinstance(t, ast.Name)}


def _name(node: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                       for v in node.values if isinstance(v, ast.Constant | ast.FormattedValue))
    return None


def _levels(call: ast.Call, position: int, function: ast.FunctionDef | None) -> set[str]:
    """The levels a call logs at: a constant, or each level a local variable may be given."""
    node = next((k.value for k in call.keywords if k.arg == "level"), None)
    if node is None and len(call.args) > position:
        node = call.args[position]
    if node is None:
        return {"INFO"}
    text = ast.unparse(node)
    if isinstance(node, ast.Name) and function is not None:
        text = " ".join(ast.unparse(n.value) for n in ast.walk(function) if isinstance(n, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == node.id for t in n.targets))
    found = {lv for lv in LEVELS if f"logging.{lv}" in text or text == lv}
    if not found:
        raise ValueError(f"a log level the docs cannot read: {ast.unparse(call)[:120]}")
    return found


class _Calls(ast.NodeVisitor):
    def __init__(self, rel: str) -> None:
        self.rel, self._function = rel, None
        self.found: list[tuple[ast.Call, ast.FunctionDef | None]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer, self._function = self._function, node
        self.generic_visit(node)
        self._function = outer

    def visit_Call(self, node: ast.Call) -> None:
        func = ast.unparse(node.func)
        name = self._function.name if self._function else ""
        wanted = func in ("logs.event", "event") or func.endswith("_log.event")
        if wanted and (self.rel, name) not in WRAPPERS:
            self.found.append((node, self._function))
        self.generic_visit(node)


def _imports(tree: ast.Module) -> dict[str, str]:
    """`from a.b import c` → {c: a.b.c} (a module imported by name, whose `log` a call may use)."""
    return {(a.asname or a.name): f"{n.module}.{a.name}" for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module for a in n.names}


def scan(root: Path = ROOT) -> dict[str, Event]:
    """Every event logged under the source folders, by name.

    Raises:
        ValueError: an event whose name is not a string the scan can read (give it a constant).
    """
    files = {}
    for folder, package in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            module = package + "." + ".".join(path.relative_to(root / folder).with_suffix("").parts)
            files[module.removesuffix(".__init__")] = (path.relative_to(root).as_posix(),
                                                        ast.parse(path.read_text(encoding="utf-8")))
    loggers = {m: _loggers(tree, m) for m, (_, tree) in files.items()}
    events: dict[str, Event] = {}
    for module, (rel, tree) in files.items():
        named = {alias: loggers[m].get("log", "?") for alias, m in _imports(tree).items() if m in loggers}
        visitor = _Calls(rel)
        visitor.visit(tree)
        for call, function in visitor.found:
            here = {**loggers[module], **{f"{a}.log": lg for a, lg in named.items()}}
            _add(events, call, function, rel, here, _constants(tree))
    return dict(sorted(events.items()))


def _add(events: dict[str, Event], call: ast.Call, function: ast.FunctionDef | None, rel: str,
         loggers: dict[str, str], constants: dict[str, str]) -> None:
    bound = not ast.unparse(call.func).endswith("_log.event")  # logs.event(logger, name, ...)
    args = call.args[1:] if bound else call.args
    name = _name(args[0], constants) if args else None
    if name is None:
        raise ValueError(f"{rel}:{call.lineno}: an event name the docs cannot read: "
                         f"{ast.unparse(call)[:120]}")
    ev = events.setdefault(name.replace("{self._", "{"), Event(name.replace("{self._", "{")))
    logger = ast.unparse(call.args[0]) if bound else "log"  # a RateLimitedLog of the module's logger
    # a logger handed in by the caller (self._log) is the caller's
    ev.loggers.add("(the caller's)" if logger.startswith("self.") else loggers.get(logger, "?"))
    ev.levels |= _levels(call, 2 if bound else 1, function)
    ev.fields |= {k.arg for k in call.keywords if k.arg and k.arg != "level"}
    ev.open_fields |= any(k.arg is None for k in call.keywords)
    ev.modules.add(rel)


def page() -> str:
    lines = [GENERATED.format(source="the `logs.event` calls in lakeinlet/, sources/ and incremental/"),
             "# Log events", "",
             "Both jobs log structured events on stderr: `--log-format text` prints "
             "`time level logger: event k=v k=v`, `--log-format json` one object a line with `time`, "
             "`level`, `logger`, `event` and the fields. Every line is redacted (no secret of a URI or "
             "setting is printed). These are the events, found in the source; a field list ending in "
             "… may carry more (e.g. `route` with routes), and `{what}` in a name stands for the part the "
             "call fills in (the command: `poll failed`; the log: `poison log lines suppressed`). "
             "Other lines are plain log messages.", "",
             "| event | level | logger | fields | logged in |", "| --- | --- | --- | --- | --- |"]
    for ev in scan().values():
        fields = ", ".join(f"`{f}`" for f in sorted(ev.fields)) + (", …" if ev.open_fields else "")
        lines.append(f"| `{ev.name}` | {', '.join(sorted(ev.levels, key=LEVELS.index))} | "
                     f"{', '.join(f'`{lg}`' for lg in sorted(ev.loggers))} | {fields or '…'} | "
                     f"{', '.join(f'`{m}`' for m in sorted(ev.modules))} |")
    return "\n".join(lines) + "\n"
