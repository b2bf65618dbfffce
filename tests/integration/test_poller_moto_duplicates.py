"""On moto: a message handed out twice within one batch becomes one changelog row, and both
receipts are deleted after the commit without being reported as failed deletes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from lakeinlet.aws import AwsSection, client
from lakeinlet.changelog.reader import DeltaChangelog
from lakeinlet.dev.emulator import Stack
from lakeinlet.sources.poller import Poller, PollerSettings
from lakeinlet.sources.ports import Message
from lakeinlet.sources.sqs import SqsQueue

pytestmark = pytest.mark.integration


class SecondReceipt(SqsQueue):
    """Makes each message visible again right after its first receipt (as when moto hands one
    message to two concurrent receivers): it is received a second time, with another handle."""

    seen: set[str]

    def receive(self, max_messages: int, wait_seconds: int, visibility_timeout: int) -> list[Message]:
        got = super().receive(max_messages, wait_seconds, visibility_timeout)
        first = [m for m in got if m.message_id not in self.seen]
        self.seen |= {m.message_id for m in first}
        self.change_visibility([m.receipt_handle for m in first], 0)
        return got


def test_one_row_per_event_id_and_both_receipts_deleted(stack: Stack, aws: AwsSection,
                                                        tmp_path: Path) -> None:
    s3 = client("s3", aws)
    keys = [f"twice/{i}.json" for i in range(3)]
    for key in keys:
        s3.put_object(Bucket=stack.bucket, Key=key, Body=b"{}")
    queue = SecondReceipt(client("sqs", aws), stack.queue_url)
    queue.seen = set()
    uri = str(tmp_path / "cl")
    settings = PollerSettings(wait_seconds=1, receivers=1, batch_size=100, batch_seconds=30,
                              until_empty=True)
    summary = Poller(queue=queue, changelog=DeltaChangelog(uri, aws), settings=settings).run()
    got = pa.table(DeltaChangelog(uri, aws).read_versions(-1)).to_pylist()
    found = sorted(str(r["key"]) for r in got)
    assert found == keys, f"expected one row per key {keys}, found {found}"
    assert summary.messages == 2 * (len(keys) + 1), summary  # + s3:TestEvent, each received twice
    assert summary.delete_failures == 0, f"expected no failed deletes, found {summary}"
    depths = queue.depths()
    assert (depths.visible, depths.in_flight) == (0, 0), depths
