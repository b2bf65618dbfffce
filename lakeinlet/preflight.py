"""Start-up checks of the tables a job reads and writes: each bucket exists and answers, each local
folder can be written. A wrong setting then ends in one line per problem, not a stack trace."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from botocore.exceptions import BotoCoreError, ClientError

from lakeinlet.aws import AwsSection, client
from lakeinlet.errors import ConfigError

MISSING_BUCKET = {"404", "NoSuchBucket", "NotFound"}


def check_locations(locations: Mapping[str, str], aws: AwsSection,
                    s3: Callable[[], Any] | None = None) -> None:
    """Check every `flag → URI`; one bucket is asked once however many flags name it.

    Access denied on the bucket itself is not a problem here: a role may read and write under a
    prefix without the right to list the whole bucket.

    Raises:
        ConfigError: every location that cannot work, each named by its flag.
    """
    problems: list[str] = []
    answers: dict[str, str | None] = {}
    made: list[Any] = []

    def s3_client() -> Any:
        if not made:
            # Few attempts: a closed port should be reported in seconds, not after a minute of retries.
            made.append(s3() if s3 else client("s3", replace(aws, max_attempts=min(aws.max_attempts, 3))))
        return made[0]

    for flag, uri in locations.items():
        parsed = urlparse(uri)
        if parsed.scheme in ("s3", "s3a"):
            if parsed.netloc not in answers:
                answers[parsed.netloc] = _bucket_problem(s3_client(), parsed.netloc, aws)
            if answers[parsed.netloc]:
                problems.append(f"{flag} {uri}: {answers[parsed.netloc]}")
        elif parsed.scheme in ("", "file") and (said := _folder_problem(parsed.path or uri)):
            problems.append(f"{flag} {uri}: {said}")
    if problems:
        raise ConfigError(problems)


def _bucket_problem(s3: Any, bucket: str, aws: AwsSection) -> str | None:
    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in MISSING_BUCKET:
            return f"expected an existing bucket, found no bucket {bucket!r}"
        return None
    except BotoCoreError as exc:  # nothing else can be checked: say it once
        where = aws.endpoint_url or f"S3 in {aws.region}"
        raise ConfigError([f"expected S3 to answer at {where}, found: {exc}"]) from exc
    return None


def _folder_problem(path: str) -> str | None:
    """`path`, or the nearest folder above it that exists, must be a folder this user can write."""
    here = Path(os.path.abspath(path))
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():
        return f"expected a folder, found a file at {here}"
    try:  # a real probe: permission bits say nothing for root or on a read-only filesystem
        fd, probe = tempfile.mkstemp(prefix=".lakeinlet-probe-", dir=here)
    except OSError as exc:
        return f"expected a folder this user can write, found {here} not writable ({exc.strerror})"
    os.close(fd)
    os.unlink(probe)
    return None
