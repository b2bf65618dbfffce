"""Wall time of the README's event-source flow (`lakeinlet-poll --until-empty` on the local stack,
as a process, interpreter start-up included): a figure, not a pass/fail test."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Run, add_json_flag

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}


def local_up(state: Path) -> dict[str, object]:
    out = subprocess.run([str(BIN / "lakeinlet"), "local", "up", "--state-dir", str(state)],
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def local_down(state: Path) -> None:
    subprocess.run([str(BIN / "lakeinlet"), "local", "down", "--state-dir", str(state)],
                   capture_output=True, check=False)


def fill(stack: dict[str, object], messages: int) -> None:
    """Upload objects until the queue holds `messages` visible messages (TestEvent included)."""
    from lakeinlet.aws import AwsSection, client

    aws = AwsSection(endpoint_url=str(stack["endpoint"]))
    s3, sqs = client("s3", aws), client("sqs", aws)
    for i in range(messages - 1):
        s3.put_object(Bucket=str(stack["bucket"]), Key=f"readme/{i}.json", Body=b'{"n": 1}\n')
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        attrs = sqs.get_queue_attributes(QueueUrl=str(stack["queue_url"]),
                                         AttributeNames=["ApproximateNumberOfMessages"])
        if int(attrs["Attributes"]["ApproximateNumberOfMessages"]) >= messages:
            return
        time.sleep(0.1)
    raise RuntimeError(f"expected {messages} messages in the queue, found fewer after 10 s")


def one_run(messages: int, extra: list[str]) -> tuple[float, str]:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        stack = local_up(state)
        try:
            fill(stack, messages)
            env = os.environ | {"AWS_ENDPOINT_URL": str(stack["endpoint"])}
            cmd = [str(BIN / "lakeinlet-poll"), "--queue-url", str(stack["queue_url"]),
                   "--changelog", str(Path(tmp) / "lake" / "changelog"), "--bucket", str(stack["bucket"]),
                   "--until-empty", *extra]
            started = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
            seconds = time.monotonic() - started
        finally:
            local_down(state)
    if out.returncode != 0:
        raise RuntimeError(f"lakeinlet-poll exited {out.returncode}: {out.stderr[-2000:]}")
    summary = [line for line in out.stderr.splitlines() if " summary " in line]
    return seconds, summary[-1] if summary else ""


def main() -> int:
    """`lakeinlet local up` (moto on 127.0.0.1, default queue settings), upload objects until the
    queue holds `--messages` messages (the s3:TestEvent counts as one), then time
    `lakeinlet-poll --queue-url <url> --changelog <dir> --until-empty [flags after --]` and
    `lakeinlet local down`."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("extra", nargs="*", help="extra lakeinlet-poll flags (after --)")
    add_json_flag(parser)
    args = parser.parse_args()
    report = Run("Event source")
    os.environ.update(CREDENTIALS)
    times = []
    for i in range(args.repeat):
        seconds, summary = one_run(args.messages, args.extra)
        times.append(seconds)
        print(f"run {i + 1}: {seconds:.2f} s  {summary}")
    print(f"README flow, {args.messages} messages, flags {args.extra or 'default'}: "
          f"median {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f})")
    report.row(f"the local flow's drain and stop ({args.messages} messages on moto, process start included; "
               f"median of {args.repeat})",
               f"{statistics.median(times):.1f} s with flags {' '.join(args.extra) or '(default)'}", "", "",
               seconds=times)
    report.write(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
