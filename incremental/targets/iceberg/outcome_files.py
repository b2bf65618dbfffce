"""Outcomes kept beside a target whose commit metadata must stay small (Iceberg keeps every
snapshot's summary in each metadata.json): one JSON file per batch."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow.fs as pafs

from lakeinlet.aws import AwsSection
from lakeinlet.incremental.model import Outcome
from lakeinlet.incremental.targets.commits import outcomes_from, outcomes_json
from lakeinlet.storage import TableLocation


class OutcomeFiles:
    """`<uri>/<batch id>.json`; the ledger's folder by default (`_pending/`, which Delta ignores).

    Written before the commit that names the batch, read back only for committed batches (ledger
    repair). They stay: like Delta's commit metadata, they are the durable record of what each
    batch did."""

    def __init__(self, where: str | TableLocation, aws: AwsSection) -> None:
        self.fs, self.root = TableLocation.of(where).filesystem(aws)

    def put(self, batch_id: str, outcomes: Sequence[Outcome]) -> None:
        if isinstance(self.fs, pafs.LocalFileSystem):
            self.fs.create_dir(self.root, recursive=True)
        with self.fs.open_output_stream(f"{self.root}/{batch_id}.json") as out:
            out.write(outcomes_json(outcomes).encode())

    def get(self, batch_id: str) -> list[Outcome]:
        """The outcomes of a committed batch; raises FileNotFoundError if none were kept."""
        with self.fs.open_input_stream(f"{self.root}/{batch_id}.json") as src:
            return outcomes_from(src.read().decode())
