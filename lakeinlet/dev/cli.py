"""`lakeinlet`: the embedded local stack (`local up|env|samples|status|down`), jar fetching, config
reference. The jobs have their own commands: `lakeinlet-poll` (event source), `lakeinlet-load` (loader)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import sys
from pathlib import Path

from lakeinlet import add_version_flag
from lakeinlet.dev import emulator
from lakeinlet.jars import main as fetch_jars_main

STATE_FILE = "local.json"


def _state_path(state_dir: str) -> Path:
    return Path(state_dir) / STATE_FILE


def local_up(args: argparse.Namespace) -> int:
    """Start a moto server in the background on 127.0.0.1 and provision the stack."""
    path = _state_path(args.state_dir)
    if path.exists():
        print(f"a local stack is already recorded in {path}; run `lakeinlet local down` first",
              file=sys.stderr)
        return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    server = emulator.MotoServer(args.port, log=str(path.parent / "moto.log"))
    try:
        server.start()
    except emulator.MotoMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"{exc}; see {path.parent / 'moto.log'}", file=sys.stderr)
        return 1
    for name, value in emulator.TEST_CREDENTIALS.items():
        os.environ.setdefault(name, value)
    stack = emulator.provision(server.endpoint, bucket=args.bucket, queue=args.queue,
                               via_sns=args.via_sns, raw_delivery=args.raw_delivery)
    identity = emulator.process_identity(server.pid) if server.pid else None
    path.write_text(json.dumps({"pid": server.pid, "identity": identity,
                                "stack": json.loads(stack.to_json())}, indent=2))
    print(stack.to_json())
    print(f"\nexport AWS_ENDPOINT_URL={server.endpoint} AWS_ACCESS_KEY_ID=testing "
          f"AWS_SECRET_ACCESS_KEY=testing AWS_DEFAULT_REGION={stack.region}", file=sys.stderr)
    return 0


def local_down(args: argparse.Namespace) -> int:
    """Stop the background moto server recorded by `local up` (its data is gone with it): only the
    process `up` started, known by its pid, start time and command line; any other is left alone."""
    path = _state_path(args.state_dir)
    if not path.exists():
        print(f"no local stack is running (nothing recorded in {path})", file=sys.stderr)
        return 0
    state = json.loads(path.read_text())
    pid, recorded = int(state["pid"]), state.get("identity")
    found = emulator.process_identity(pid)
    if found is None:
        path.unlink()
        print(f"the moto server (pid {pid}) had already stopped")
        return 0
    if found != recorded or not emulator.is_moto(found):
        print(f"pid {pid} is not the moto server `lakeinlet local up` recorded in {path} (another "
              f"process, or one started at another time): nothing stopped; remove {path} if that "
              "stack is gone", file=sys.stderr)
        return 2
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)  # `up` started it in a session of its own: pid is its group
    path.unlink()
    print(f"stopped moto server (pid {pid})")
    return 0


def _recorded(args: argparse.Namespace) -> dict[str, str] | None:
    path = _state_path(args.state_dir)
    if not path.exists():
        print(f"no local stack is running (nothing recorded in {path}): run `lakeinlet local up`",
              file=sys.stderr)
        return None
    return dict(json.loads(path.read_text())["stack"])


def local_env(args: argparse.Namespace) -> int:
    """Print `export` lines for the running stack: eval "$(lakeinlet local env)"."""
    stack = _recorded(args)
    if stack is None:
        return 2
    values = {"AWS_ENDPOINT_URL": stack["endpoint"], "AWS_DEFAULT_REGION": stack["region"],
              **emulator.TEST_CREDENTIALS, "QUEUE_URL": stack["queue_url"], "DLQ_URL": stack["dlq_url"],
              "BUCKET": stack["bucket"], "LAKEINLET__FILTER__BUCKETS": stack["bucket"]}
    for name, value in values.items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


def local_samples(args: argparse.Namespace) -> int:
    """Upload sample files (order_id, customer, amount, ts) into the stack's bucket."""
    from lakeinlet.aws import AwsSection, client
    from lakeinlet.dev.samples import make_files, upload

    stack = _recorded(args)
    if stack is None:
        return 2
    os.environ.update({k: v for k, v in emulator.TEST_CREDENTIALS.items() if k not in os.environ})
    files = make_files(args.format, args.count, args.rows, prefix=args.prefix, start=args.start)
    size = upload(client("s3", AwsSection(endpoint_url=stack["endpoint"])), stack["bucket"], files)
    print(f"uploaded {len(files)} {args.format} files ({size} bytes, {args.count * args.rows} rows) "
          f"to s3://{stack['bucket']}/{files[0].key.rsplit('/', 1)[0]}/")
    return 0


def local_status(args: argparse.Namespace) -> int:
    path = _state_path(args.state_dir)
    if not path.exists():
        print("no local stack is running")
        return 1
    print(path.read_text())
    return 0


REF_START, REF_END = "<!-- config-reference:start -->", "<!-- config-reference:end -->"


def reference_text() -> str:
    """The configuration reference of both jobs as Markdown (generated from the field docs)."""
    from lakeinlet.config import reference_markdown
    from lakeinlet.incremental.settings import LoaderConfig
    from lakeinlet.sources.settings import MaintainConfig, SourceConfig

    return (reference_markdown(SourceConfig, "Event source (`lakeinlet-poll`)") + "\n"
            + reference_markdown(MaintainConfig, "Changelog maintenance (`lakeinlet-poll maintain`; "
                                 "aws and log flags as above)", ("maintain",)) + "\n"
            + reference_markdown(LoaderConfig, "Incremental loader (`lakeinlet-load`)"))


def config_reference(args: argparse.Namespace) -> int:
    """Print the reference, or with --update rewrite the block between the markers of FILE."""
    text = reference_text()
    if not args.update:
        print(text)
        return 0
    path = Path(args.update)
    doc = path.read_text(encoding="utf-8")
    if REF_START not in doc or REF_END not in doc:
        print(f"{path}: markers {REF_START} … {REF_END} not found", file=sys.stderr)
        return 2
    head, rest = doc.split(REF_START, 1)
    tail = rest.split(REF_END, 1)[1]
    path.write_text(f"{head}{REF_START}\n{text}{REF_END}{tail}", encoding="utf-8")
    print(f"updated the configuration reference in {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lakeinlet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version_flag(parser)
    sub = parser.add_subparsers(dest="command", required=True)
    local = sub.add_parser("local", help="the embedded local stack (moto on 127.0.0.1)")
    lsub = local.add_subparsers(dest="action", required=True)
    up = lsub.add_parser("up", help="start moto and provision bucket, queue, DLQ, notification",
                         formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    up.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    up.add_argument("--bucket", default="lakeinlet-landing", help="bucket to create")
    up.add_argument("--queue", default="lakeinlet-events", help="queue name (the DLQ is <name>-dlq)")
    up.add_argument("--via-sns", action="store_true", help="route S3 → SNS → SQS")
    up.add_argument("--raw-delivery", action="store_true",
                    help="with --via-sns: raw message delivery (the S3 event is the SQS body, "
                    "not wrapped in an SNS envelope)")
    up.set_defaults(func=local_up)
    samples = lsub.add_parser("samples", help="upload sample files into the stack's bucket",
                              formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    samples.add_argument("--format", choices=("json", "csv", "parquet"), default="json",
                         help="file format")
    samples.add_argument("--count", type=int, default=4, help="number of files")
    samples.add_argument("--rows", type=int, default=5, help="rows per file")
    samples.add_argument("--prefix", default=None, help="key prefix (default: <format>/)")
    samples.add_argument("--start", type=int, default=0,
                         help="number of the first file (use a new one to upload new files, not overwrites)")
    samples.set_defaults(func=local_samples)
    for name, func, text in (("down", local_down, "stop the local stack"),
                             ("env", local_env, 'export lines for the stack: eval "$(lakeinlet local env)"'),
                             ("status", local_status, "show what `up` recorded")):
        lsub.add_parser(name, help=text, formatter_class=argparse.ArgumentDefaultsHelpFormatter
                        ).set_defaults(func=func)
    for p in lsub.choices.values():
        p.add_argument("--state-dir", default=".lakeinlet", help="where `up` records the stack")
    sub.add_parser("jars", help="fetch the Spark jars (s3a, Hudi, Iceberg) from Maven Central "
                   "into the jar cache (~/.cache/lakeinlet/jars), or print spark-submit's --packages "
                   "line (`lakeinlet jars --help`)")
    ref = sub.add_parser("config-reference", help="print both jobs' configuration as Markdown")
    ref.add_argument("--update", metavar="FILE", help="rewrite the reference block in FILE")
    ref.set_defaults(func=config_reference)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["jars"]:
        return fetch_jars_main(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
