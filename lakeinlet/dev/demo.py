"""`make demo`: the whole pipeline on a local emulator, narrated: moto on 127.0.0.1, a bucket that
notifies SQS (+ DLQ), JSON lines, CSV and Parquet files under three prefixes, the event source until
the queue is empty, then the loader once per prefix into three Delta tables, every row checked."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from lakeinlet.aws import AwsSection, client
from lakeinlet.dev.emulator import TEST_CREDENTIALS, MotoServer, provision
from lakeinlet.dev.samples import FORMATS, SCHEMA_DDL, make_files, upload
from lakeinlet.storage import storage_options

FILES_PER_FORMAT = {"json": 3, "csv": 2, "parquet": 2}
READ_OPTIONS = {"csv": ["--read-option", "header=true"]}


def _say(text: str) -> None:
    print(f"\n== {text}", flush=True)


def _table_rows(uri: str, aws: AwsSection) -> list[dict[str, Any]]:
    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    query = QueryBuilder().register("t", dt)
    return pa.table(query.execute("SELECT * FROM t ORDER BY order_id").read_all()).to_pylist()


def _ledger_summary(uri: str, aws: AwsSection) -> list[dict[str, Any]]:
    from deltalake import DeltaTable, QueryBuilder

    dt = DeltaTable(uri, storage_options=storage_options(aws, uri))
    sql = "SELECT status, count(*) AS objects, sum(rows) AS rows FROM l GROUP BY status ORDER BY status"
    return pa.table(QueryBuilder().register("l", dt).execute(sql).read_all()).to_pylist()


def run(workdir: Path) -> int:
    """Run the demo; returns 0 when every uploaded row landed exactly once."""
    from lakeinlet.incremental.job import main as load_main
    from lakeinlet.sources.job import main as poll_main

    with MotoServer(log=str(workdir / "moto.log")) as server:
        aws = AwsSection(endpoint_url=server.endpoint)
        stack = provision(server.endpoint, bucket="demo-landing", queue="demo-events")
        client("s3", aws).create_bucket(Bucket="demo-lake")
        _say(f"local stack on {server.endpoint}: bucket {stack.bucket}, queue {stack.queue_url}, "
             f"DLQ {stack.dlq_url}")
        s3 = client("s3", aws)
        uploaded = {fmt: make_files(fmt, FILES_PER_FORMAT[fmt], rows_per_file=4) for fmt in FORMATS}
        for fmt, files in uploaded.items():
            size = upload(s3, stack.bucket, files)
            print(f"uploaded {len(files)} {fmt} files ({size:,} bytes) under {fmt}/")
        changelog = "s3://demo-lake/changelog"
        _say("event source: lakeinlet-poll --until-empty")
        started = time.monotonic()
        rc = poll_main(["--queue-url", stack.queue_url, "--changelog", changelog,
                        "--endpoint-url", server.endpoint, "--until-empty", "--wait-seconds", "1",
                        "--bucket", stack.bucket, "--batch-seconds", "2"])
        print(f"exit {rc} in {time.monotonic() - started:.1f}s")
        if rc:
            return rc
        expected = 0
        for fmt, files in uploaded.items():
            table = f"s3a://demo-lake/tables/{fmt}"
            _say(f"loader: lakeinlet-load run --source-format {fmt} --prefix {fmt}/ → {table}")
            rc = load_main(["run", "--changelog", changelog, "--table", table,
                            "--source-format", fmt, "--prefix", f"{fmt}/", "--schema", SCHEMA_DDL,
                            *READ_OPTIONS.get(fmt, []), "--endpoint-url", server.endpoint,
                            "--drain", "--on-missing-checkpoint", "earliest",
                            "--spark-conf", "spark.ui.showConsoleProgress=false"])
            if rc:
                return rc
            rows = _table_rows(table.replace("s3a://", "s3://"), aws)
            want = sorted(r["order_id"] for f in files for r in f.rows)
            expected += len(want)
            got = [r["order_id"] for r in rows]
            print(f"{table}: {len(rows)} rows (uploaded {len(want)}), "
                  f"exactly once: {got == want}")
            for r in rows[:2]:
                print("  ", {k: r[k] for k in ("order_id", "customer", "amount", "_source_key")})
            ledger = _ledger_summary(f"s3://demo-lake/tables/{fmt}_ledger", aws)
            print("   ledger:", ", ".join(f"{x['status']}={x['objects']}" for x in ledger))
            if got != want:
                return 1
        _say(f"done: {expected} rows from {sum(map(len, uploaded.values()))} files, each exactly once")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lakeinlet-demo", description=__doc__)
    parser.add_argument("--workdir", help="where to keep the emulator log (default: a temp dir)")
    args = parser.parse_args(argv)
    for name, value in TEST_CREDENTIALS.items():
        os.environ.setdefault(name, value)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    # Spark's driver binds to the host's first interface otherwise; the demo stays on loopback.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        return run(Path(args.workdir))
    with tempfile.TemporaryDirectory(prefix="lakeinlet-demo-") as tmp:
        return run(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
