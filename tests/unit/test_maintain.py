"""`lakeinlet-poll maintain` on local folders: compaction is invisible to a loader's read of the
versions after its checkpoint, the vacuum keeps what a registered loader still needs and deletes
it once the loader has passed the compaction, refusals, dry run, --help."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from deltalake import DeltaTable

from lakeinlet.aws import AwsSection
from lakeinlet.changelog.maintain import storage
from lakeinlet.changelog.writer import OpenDeltaChangelog
from lakeinlet.incremental.changelog_reader import ChangelogReader
from lakeinlet.incremental.model import START, Position
from lakeinlet.incremental.targets.delta.target import DeltaTarget
from lakeinlet.sources.job import main
from tests.conftest import received_rows

pytestmark = pytest.mark.unit


def changelog(tmp_path: Path, commits: int = 8) -> str:
    uri = str(tmp_path / "changelog")
    writer = OpenDeltaChangelog(uri)
    for i in range(commits):
        writer.append(received_rows(f"b{i}", 3), {"poll_batch": f"b{i}"})
    return uri


def loader_at(tmp_path: Path, name: str, consumed: int) -> str:
    """A Delta target whose loader checkpoint says it consumed every version <= `consumed`."""
    uri = str(tmp_path / name)
    target = DeltaTarget(uri, AwsSection(), "lakeinlet-loader")
    target.commit_position(None, Position(consumed), "test", START)
    return uri


def loader_read(uri: str, after: int) -> list[str]:
    """What the loader plans from: the event ids of the versions after `after` (rows_after)."""
    rows, _ = ChangelogReader(OpenDeltaChangelog(uri)).rows_after(Position(after), 10_000)
    return [f"{r.key}#{r.event_id}" for r in rows]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["maintain", *argv])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_loader_reads_no_row_twice_after_compaction(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path)
    before = loader_read(uri, 3)
    assert len(before) == 12, "expected versions 4..7, 3 rows each, before maintain"
    code, out = run(["--changelog", uri, "--loader-table", loader_at(tmp_path, "t", 3),
                     "--retention-hours", "0"], capsys)
    assert code == 0, out
    assert "8 small files rewritten as 1" in out, out
    assert len(DeltaTable(uri).file_uris()) == 1, "expected one file after compaction"
    after = loader_read(uri, 3)
    assert sorted(after) == sorted(before), f"the read after 3 changed: {Counter(after) - Counter(before)}"
    assert max(Counter(after).values()) == 1, "a row read twice after compaction"
    assert len(loader_read(uri, -1)) == 24, "the change data feed from the start has every row once"


def test_vacuum_keeps_what_a_loader_needs_until_it_passes_the_compaction(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path)
    lagging, caught_up = loader_at(tmp_path, "lagging", 3), loader_at(tmp_path, "current", 7)
    code, out = run(["--changelog", uri, "--loader-table", lagging, "--loader-table", caught_up,
                     "--retention-hours", "0"], capsys)
    assert code == 0, out
    assert "files removed      0" in out, f"the lagging loader needs the small files: {out}"
    assert storage(uri, AwsSection()).files == 9, "expected 8 small files and the compacted one"
    assert len(loader_read(uri, 3)) == 12, "the lagging loader still reads versions 4..7"
    compaction = next(int(h["version"]) for h in DeltaTable(uri).history() if h["operation"] == "OPTIMIZE")
    passed = loader_at(tmp_path, "passed", compaction)
    code, out = run(["--changelog", uri, "--loader-table", passed, "--loader-table", caught_up,
                     "--retention-hours", "0"], capsys)
    assert code == 0, out
    assert "files removed      8" in out, out
    assert storage(uri, AwsSection()).files == 1, "expected only the compacted file left"
    OpenDeltaChangelog(uri).append(received_rows("new", 2), {"poll_batch": "new"})
    assert len(loader_read(uri, compaction)) == 2, "the loader reads the next versions"


def test_retention_keeps_replaced_files_younger_than_it(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path)
    code, out = run(["--changelog", uri, "--no-loaders"], capsys)
    assert code == 0, out
    assert "files removed      0" in out, f"168 h default retention: nothing is old enough: {out}"
    code, out = run(["--changelog", uri, "--no-loaders", "--retention-hours", "0"], capsys)
    assert "files removed      8" in out and "after: 1 files" in out, out


def test_a_loader_without_checkpoint_keeps_every_version(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path)
    other = str(tmp_path / "other")
    DeltaTarget(other, AwsSection(), "another-app").commit_position(None, Position(7), "test", START)
    code, out = run(["--changelog", uri, "--loader-table", other, "--retention-hours", "0"], capsys)
    assert code == 0, out
    assert "consumed through version -1" in out and "files removed      0" in out, out


def test_dry_run_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path)
    code, out = run(["--changelog", uri, "--no-loaders", "--retention-hours", "0", "--dry-run"], capsys)
    assert code == 0, out
    assert "8 small files would be rewritten" in out and "DRY RUN" in out, out
    assert DeltaTable(uri).version() == 7 and len(DeltaTable(uri).file_uris()) == 8


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    uri = changelog(tmp_path, 2)
    code, out = run(["--changelog", uri], capsys)
    assert code == 2 and "--no-loaders" in out, out
    (tmp_path / "hudi" / ".hoodie").mkdir(parents=True)
    code, out = run(["--changelog", uri, "--loader-table", str(tmp_path / "hudi")], capsys)
    assert code == 2 and "a Hudi table" in out and "Delta target" in out, out
    code, out = run(["--changelog", uri, "--loader-table", str(tmp_path / "none")], capsys)
    assert code == 2 and "found no table" in out, out
    both = ["--no-loaders", "--loader-table", loader_at(tmp_path, "t", 1)]
    code, out = run(["--changelog", uri, *both], capsys)
    assert code == 2 and "expected one or the other" in out, out
    assert DeltaTable(uri).version() == 1, "a refused run changed the changelog"


def test_maintain_help_shows_its_own_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["maintain", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--changelog URI Required.", "--loader-table URI", "--no-loaders ",
                 "--retention-hours HOURS", "--dry-run"):
        assert flag in text, f"expected {flag!r} in maintain --help"
    assert "--no-no-loaders" not in text and "--queue-url" not in text, text[:400]
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "maintain compact the changelog" in " ".join(capsys.readouterr().out.split())


def test_a_loader_position_given_by_hand_keeps_what_that_loader_needs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Hudi or Iceberg loader's position (from `checkpoint show --json`) protects its reads the
    way a Delta --loader-table does; a Delta loader's table gives the same position."""
    uri = changelog(tmp_path)
    code, out = run(["--changelog", uri, "--loader-position", "3", "--loader-table",
                     loader_at(tmp_path, "current", 7), "--retention-hours", "0"], capsys)
    assert code == 0, out
    assert "--loader-position: consumed through version 3" in out, out
    assert "files removed      0" in out, f"the lagging loader needs the small files: {out}"
    assert len(loader_read(uri, 3)) == 12, "the lagging loader still reads versions 4..7"
    code, out = run(["--changelog", uri, "--loader-position", "-2"], capsys)
    assert code == 2 and "expected -1 or more, found -2" in out, out
