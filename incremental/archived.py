"""Archived copies (`--after-load archive:`): how each is marked, and why it is never loaded again.
The archive's location tells this loader's own copies apart; only the mark tells another table's."""

from __future__ import annotations

IDENTITY_META = "lakeinlet-source-identity"
"""User metadata of an archived copy: the identity of the source version it holds."""


def archived_reason(bucket: str, key: str, identity: str) -> str:
    """The one-line reason an archived copy at bucket/key is set aside (`filtered`)."""
    return (f"an archived copy of a loaded object (s3://{bucket}/{key} carries "
            f"x-amz-meta-{IDENTITY_META}: {identity}, written by --after-load archive): never loaded "
            "again; load the source object itself, or upload a copy without that metadata")
