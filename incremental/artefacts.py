"""Which keys are a writer's artefacts, not data: Spark's hidden-file rule applied to every folder
and name of a key below the prefix it was selected by, plus the folder markers S3 tools leave."""

from __future__ import annotations

from collections.abc import Sequence

COPYING = "._COPYING_"
"""What `hadoop fs -put`/`distcp` name a file while they copy it."""
FOLDER_MARKER = "_$folder$"
"""What Hadoop's s3n/EMRFS left for an empty folder."""


def artefact(key: str, prefixes: Sequence[str] = ()) -> str | None:
    """Why `key` is an artefact (one line naming the part that makes it one), or None when it is
    data. The rule is Spark's file index's: a name starting with `_` (unless it holds `=`, a
    partition folder) or `.`, or ending `._COPYING_`, is not read. Only the part of the key below
    the folder of the longest prefix it is under is judged, so `--prefix _raw/` still loads."""
    rel = key[len(base_folder(key, prefixes)):]
    if not rel or rel.endswith("/"):
        return "a folder marker (the key ends with '/'), not data"
    for part in rel.split("/"):
        if part.endswith(FOLDER_MARKER):
            return f"a folder marker ({part!r}), not data"
        if part.endswith(COPYING):
            return f"a copy in progress ({part!r}: Hadoop's name for a file still being copied)"
        if part.startswith(".") or (part.startswith("_") and "=" not in part):
            return (f"a writer's artefact, not data ({part!r} starts with {part[0]!r}: Spark's rule "
                    "for hidden files, e.g. _temporary/, _SUCCESS, .crc); --include-hidden loads it")
    return None


def base_folder(key: str, prefixes: Sequence[str]) -> str:
    """The folder part of the longest prefix `key` is under ('' when none is given)."""
    under = [p for p in prefixes if key.startswith(p)]
    if not under:
        return ""
    longest = max(under, key=len)
    return longest[:longest.rfind("/") + 1]
