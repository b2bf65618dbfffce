"""A batch whose Spark job fails (not its planning: `paths.unplannable`) is narrowed down to the
objects that fail alone; they are set aside, each with the error's root cause, and the rest loads."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.errors import AnalysisException

from lakeinlet.incremental.model import CORRUPT, PlannedObject
from lakeinlet.incremental.read.causes import root_cause
from lakeinlet.incremental.read.paths import MAX_PLANS, search
from lakeinlet.incremental.read.verdicts import Failed

NOT_THE_OBJECT = ("SdkClientException", "ConnectException", "ConnectTimeout", "SocketTimeout",
                  "UnknownHost", "AmazonS3Exception", "AwsServiceException", "S3Exception",
                  "SlowDown", "Throttl", "InterruptedIOException", "OutOfMemoryError",
                  "AccessDenied", "NoSuchBucket")
"""Root causes that speak of the store, the credentials or the cluster, never of an object's bytes:
an object failing with one of these is not set aside (the batch fails and is tried again)."""


def failing_alone(read: Callable[[Sequence[PlannedObject]], object], objs: Sequence[PlannedObject],
                  error: BaseException) -> Failed:
    """The objects whose read (`read` of some objects runs the batch's Spark job over them) fails
    alone, each `corrupt` with the root cause; empty when the error cannot be pinned on objects:
    the store or the cluster failed, every object fails and the error names no file, or the
    search took more than MAX_PLANS reads (the caller then raises `error`)."""
    if _not_the_object(error):
        return {}
    found = search(read, list(objs), [MAX_PLANS])
    if not found or (len(found) == len(objs) and not any(_names_a_file(exc) for _, exc in found)):
        return {}
    return {(o.bucket, o.key): (CORRUPT, f"Spark cannot read it: {root_cause(exc)}")
            for o, exc in found if not _not_the_object(exc)}


def _not_the_object(exc: BaseException) -> bool:
    text = f"{exc} {root_cause(exc)}"
    return any(marker in text for marker in NOT_THE_OBJECT)


def _names_a_file(exc: BaseException) -> bool:
    """Spark's own words for an error reading one file (3.5: "Encountered error while reading
    file"; 4.x: FAILED_READ_FILE), or its analysis of what one object holds."""
    text = str(exc)
    return isinstance(exc, AnalysisException) or "while reading file" in text or "FAILED_READ_FILE" in text
