"""A table URI in the forms each engine speaks (delta-rs `s3://`, Spark `s3a://`, absolute local
paths) and the storage options each engine needs for it, built from one `AwsSection`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pyarrow.fs as pafs

from lakeinlet.aws import AwsSection

CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


def delta_uri(table_uri: str) -> str:
    """delta-rs speaks `s3://`; Spark on some platforms is configured with `s3a://`."""
    return "s3://" + table_uri[len("s3a://"):] if table_uri.startswith("s3a://") else table_uri


def absolute_local(uri: str) -> str:
    """A local table path made absolute (hudi-rs and Iceberg metadata need one; `./lake/t` is a
    README path); URIs with a scheme as they are."""
    return uri if "://" in uri or not uri else os.path.abspath(uri)


def spark_uri(uri: str, scheme: str) -> str:
    """The URI as Spark addresses it (`s3a://` with hadoop-aws, `s3://` on EMR); local paths as is."""
    for prefix in ("s3://", "s3a://"):
        if uri.startswith(prefix):
            return f"{scheme}://" + uri[len(prefix):]
    return uri


@dataclass(frozen=True)
class TableLocation:
    """A table's place resolved once, in every form its readers and writers speak: `uri` for
    delta-rs and object_store (`s3://`; a local path as given), `spark` as Spark addresses it;
    `resolved()` makes a local path absolute (hudi-rs, Iceberg metadata, the writer lease)."""

    given: str
    spark_scheme: str = "s3a"

    @classmethod
    def of(cls, where: str | TableLocation, spark_scheme: str = "s3a") -> TableLocation:
        """`where` as a TableLocation (a TableLocation as it is)."""
        return where if isinstance(where, TableLocation) else cls(where, spark_scheme)

    @property
    def uri(self) -> str:
        return delta_uri(self.given)


    @property
    def spark(self) -> str:
        return spark_uri(self.given, self.spark_scheme).rstrip("/")

    def resolved(self) -> TableLocation:
        """The same table with a local path made absolute (`./lake/t` is a README path)."""
        return TableLocation(absolute_local(self.given), self.spark_scheme)

    def sibling(self, suffix: str) -> TableLocation:
        """The table beside this one named with `suffix` (`_ledger`, `.lakeinlet-writer`, `/_pending`)."""
        return TableLocation(self.given.rstrip("/") + suffix, self.spark_scheme)

    def options(self, aws: AwsSection) -> dict[str, str] | None:
        """delta-rs (object_store) options for it; None for a local path."""
        return storage_options(aws, self.uri)

    def filesystem(self, aws: AwsSection) -> tuple[pafs.FileSystem, str]:
        """A pyarrow filesystem and the table's root path inside it."""
        return filesystem(self.uri, aws)


def _credentials(names: tuple[str, str, str]) -> dict[str, str]:
    """The credentials set in the environment, under an engine's option names. Only those set are
    passed on, so that on a cluster every engine uses the AWS default chain (instance profile,
    IRSA) itself."""
    return {key: os.environ[env] for env, key in zip(CREDENTIALS, names, strict=True) if os.environ.get(env)}


def storage_options(aws: AwsSection, table_uri: str) -> dict[str, str] | None:
    """delta-rs (object_store) options for a table URI; None for local paths."""
    if not table_uri.startswith(("s3://", "s3a://")):
        return None
    opts = {"AWS_REGION": aws.region, **_credentials(CREDENTIALS)}
    if aws.endpoint_url:
        opts["AWS_ENDPOINT_URL"] = aws.endpoint_url
        opts["AWS_ALLOW_HTTP"] = "true" if aws.endpoint_url.startswith("http://") else "false"
        opts["AWS_FORCE_PATH_STYLE"] = "true"
    # delta-rs commits on S3 with conditional PUT (If-None-Match): safe without a lock.
    opts["aws_conditional_put"] = "etag"
    return opts


def hudi_rs_options(aws: AwsSection, uri: str) -> dict[str, str]:
    """hudi-rs (object_store) options for an s3:// table; none for a local one."""
    if not uri.startswith("s3://"):
        return {}
    opts = {"aws_region": aws.region,
            **_credentials(("aws_access_key_id", "aws_secret_access_key", "aws_session_token"))}
    if aws.endpoint_url:
        opts |= {"aws_endpoint_url": aws.endpoint_url, "aws_virtual_hosted_style_request": "false",
                 "aws_allow_http": str(aws.endpoint_url.startswith("http://")).lower()}
    return opts


def pyiceberg_options(aws: AwsSection) -> dict[str, str]:
    """pyiceberg's S3 file IO settings: the endpoint and region of configuration."""
    props = {"s3.region": aws.region, "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
             **_credentials(("s3.access-key-id", "s3.secret-access-key", "s3.session-token"))}
    if aws.endpoint_url:
        props |= {"s3.endpoint": aws.endpoint_url, "s3.force-virtual-addressing": "false"}
    return props


def filesystem(uri: str, aws: AwsSection) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the root path inside it for a table URI (s3://, s3a:// or local)."""
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        kwargs: dict[str, Any] = {"region": aws.region}
        if aws.endpoint_url:
            ep = urlparse(aws.endpoint_url)
            kwargs |= {"endpoint_override": ep.netloc, "scheme": ep.scheme,
                       "force_virtual_addressing": False}
        return pafs.S3FileSystem(**kwargs), parsed.netloc + parsed.path.rstrip("/")
    path = parsed.path if parsed.scheme == "file" else uri
    return pafs.LocalFileSystem(), path.rstrip("/")
