"""delta-rs writes through the proxy; its commit PUT is named DeltaCommit and can be faulted."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from chaos import FaultPlan, FaultProxy, FaultRule
from lakeinlet.dev.emulator import MotoServer
from tests.conftest import unique
from tests.faults.conftest import aws_client

pytestmark = pytest.mark.integration
ROWS = pa.table({"n": [1, 2, 3]})


def options(endpoint: str) -> dict[str, str]:
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_FORCE_PATH_STYLE": "true",
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1", "aws_conditional_put": "etag"}


@pytest.fixture
def table_uri(moto_server: MotoServer) -> str:
    bucket = unique("lake")
    aws_client("s3", moto_server.endpoint).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/t"


def commits(uri: str, endpoint: str) -> list[str]:
    return [c["operation"] for c in reversed(DeltaTable(uri, storage_options=options(endpoint)).history())]


def test_delta_writes_through_the_proxy_and_commits_are_named(proxy: FaultProxy, table_uri: str) -> None:
    write_deltalake(table_uri, ROWS, storage_options=options(proxy.endpoint))
    write_deltalake(table_uri, ROWS, mode="append", storage_options=options(proxy.endpoint))
    assert commits(table_uri, proxy.endpoint) == ["WRITE", "WRITE"]
    requests = proxy.stats()["requests"]
    assert requests["DeltaCommit"] == 2 and requests["PutObject"] == 2  # 2 commits, 2 data files


def test_a_failed_commit_put_is_retried_by_delta_rs(proxy: FaultProxy, table_uri: str,
                                                     moto_server: MotoServer) -> None:
    proxy.set_plan(FaultPlan((FaultRule("DeltaCommit", "slow_down_503", nth=(1,)),)))
    write_deltalake(table_uri, ROWS, storage_options=options(proxy.endpoint))
    assert commits(table_uri, moto_server.endpoint) == ["WRITE"]
    [record] = proxy.faults()
    assert (record.operation, record.api, record.applied) == ("DeltaCommit", "PutObject", False)
    assert record.key == "t/_delta_log/00000000000000000000.json"


def test_applied_commit_with_a_lost_answer_is_committed_twice_by_delta_rs(
        proxy: FaultProxy, table_uri: str, moto_server: MotoServer) -> None:
    """Characterises delta-rs 1.6.6 under an uncertain commit (a fact for the checker).

    The commit PUT is applied, the client gets a 500; the retried conditional PUT finds the
    version taken (412), so delta-rs treats it as another writer's commit and writes the same
    actions again as the next version. Adds are keyed by path, so the rows are not doubled.
    """
    proxy.set_plan(FaultPlan((FaultRule("DeltaCommit", "error_after", nth=(1,)),)))
    write_deltalake(table_uri, ROWS, storage_options=options(proxy.endpoint))
    assert [r.applied for r in proxy.faults()] == [True]
    table = DeltaTable(table_uri, storage_options=options(moto_server.endpoint))
    assert table.version() == 1 and commits(table_uri, moto_server.endpoint) == ["WRITE", "WRITE"]
    assert len(table.file_uris()) == 1 and table.to_pyarrow_dataset().count_rows() == 3
