"""Settings of changelog maintenance (`lakeinlet-poll maintain`): what it compacts and vacuums,
and the loader positions whose reads it keeps intact."""

from __future__ import annotations

from dataclasses import dataclass

from lakeinlet.config import missing, setting


@dataclass(frozen=True)
class MaintainSection:
    """What `lakeinlet-poll maintain` compacts and vacuums, and whose reads it keeps intact."""

    changelog: str = setting("", "Changelog table to maintain: a local path or s3://bucket/prefix.",
                             metavar="URI", required=True)
    loader_tables: tuple[str, ...] = setting(
        (), "Target table of a loader that reads this changelog (repeat the flag for each). Its "
        "checkpoint says which changelog versions it has consumed; the vacuum keeps every file "
        "that any later version references, so no loader's next read finds a file gone. Delta "
        "targets are read here; give a Hudi or Iceberg loader's position with --loader-position. "
        "A loader without a checkpoint keeps every version.",
        flag="--loader-table", metavar="URI")
    loader_positions: tuple[int, ...] = setting(
        (), "The changelog version a loader has consumed through (repeat for each), for loaders "
        "whose table this command does not read (Hudi, Iceberg): `lakeinlet-load checkpoint show "
        "--json` prints it as `complete`. -1: none consumed yet (every version is kept).",
        flag="--loader-position", metavar="VERSION")
    loader_app_id: str = setting(
        "lakeinlet-loader", "The loaders' checkpoint id (their --app-id) in the target tables.",
        metavar="ID")
    no_loaders: bool = setting(
        False, "Vacuum by --retention-hours alone, with no loader registered: a loader that lags "
        "by more than the retention behind a compaction then fails on a missing file.")
    retention_hours: int = setting(
        168, "Files a compaction replaced are deleted only once they are this old, whatever the "
        "loaders need: it also covers readers not registered here. Files no commit references "
        "are never deleted (one a poller is about to commit looks the same).",
        metavar="HOURS")
    dry_run: bool = setting(
        False, "Print what would be compacted and vacuumed; change nothing.")

    def validate(self) -> list[str]:
        problems = [] if self.changelog else [missing("--changelog")]
        loaders = self.loader_tables or self.loader_positions
        if not loaders and not self.no_loaders:
            problems.append("--loader-table: expected the target table (or --loader-position) of every "
                            "loader that reads the changelog (so the vacuum keeps the files they still "
                            "need), found none; give --no-loaders to vacuum by --retention-hours alone")
        if loaders and self.no_loaders:
            problems.append("--no-loaders: given with --loader-table or --loader-position: "
                            "expected one or the other")
        problems += [f"--loader-position: expected -1 or more, found {p}" for p in self.loader_positions
                     if p < -1]
        if self.retention_hours < 0:
            problems.append(f"--retention-hours: expected 0 or more, found {self.retention_hours}")
        return problems
