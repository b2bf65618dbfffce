"""The error tree: every lakeinlet error is transient (retry may help) or terminal (it will not).
Their messages are redacted when made (`lakeinlet.redact`): an error names a setting, never its secret."""

from __future__ import annotations

from typing import Any

from lakeinlet.redact import redact


class LakeinletError(Exception):
    """Base of every error lakeinlet raises on purpose."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class TransientError(LakeinletError):
    """A failure that may succeed when retried: throttling, a timeout, a dropped connection."""


class TerminalError(LakeinletError):
    """A failure that retrying cannot fix: bad configuration, access denied, a missing table."""


class ConfigError(TerminalError):
    """The configuration is invalid; `problems` lists every problem found, not just the first."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = [redact(p) for p in problems]
        super().__init__("invalid configuration:\n  - " + "\n  - ".join(self.problems))


class EnvelopeError(TerminalError):
    """A queue message body is not an event envelope lakeinlet understands (a poison message)."""


class CommitConflict(TransientError):
    """Another writer committed the same table version first; re-plan and try again."""
