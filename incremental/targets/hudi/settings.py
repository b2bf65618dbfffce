"""Settings of the Hudi target (their own module: the loader's configuration imports them
without the adapter)."""

from __future__ import annotations

from dataclasses import dataclass

from lakeinlet.config import setting
from lakeinlet.redact import redact_setting


@dataclass(frozen=True)
class HudiSection:
    """Hudi target (--target-format hudi): write mode, options and the writer lease."""

    hudi_record_key: str | None = setting(
        None, "Record key column: writes become `upsert` (a newer row of a key replaces the older, "
        "by --hudi-ordering-field). Unset: keyless `insert`, every row kept.", metavar="COLUMN")
    hudi_ordering_field: str | None = setting(
        None, "With --hudi-record-key: the column that decides which row of a key is newest.",
        metavar="COLUMN")
    hudi_option: tuple[str, ...] = setting(
        (), "Hudi write option key=value (repeatable), over lakeinlet's defaults (metadata table "
        "off, no small-file rewrite, reconciled schema).", metavar="KEY=VALUE")
    lease_seconds: float = setting(
        300.0, "Hudi: how long the table's writer lease lasts without renewal (a heartbeat renews "
        "it every third of that). A loader that stops renewing (killed, paused) blocks others this "
        "long; keep it above any pause a loader may take mid-commit.")
    lease_wait_seconds: float = setting(
        600.0, "Hudi: how long a loader waits for another loader's lease before it stops with an error.")

    def validate(self) -> list[str]:
        bad = [kv for kv in self.hudi_option if "=" not in kv]
        problems = [f"--hudi-option: expected key=value, found {redact_setting(kv)!r}" for kv in bad]
        if self.hudi_ordering_field and not self.hudi_record_key:
            problems.append("--hudi-ordering-field: needs --hudi-record-key")
        if self.lease_seconds < 10:
            problems.append(f"--lease-seconds: expected at least 10, found {self.lease_seconds}")
        return problems
