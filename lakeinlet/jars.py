"""Fetch the Spark jars lakeinlet needs from PyPI packages (no Maven access is assumed).

The s3a connector (`hadoop-aws-3.3.1.jar`, `aws-java-sdk-bundle-1.11.901.jar`) ships inside the
sdist of `sagemaker-pyspark==1.4.5`; it is downloaded without dependencies, never installed or
imported, and only those two jars are extracted. On EMR, Dataproc or Databricks the platform's
own connector is used instead and this step is not needed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

S3A_PACKAGE = "sagemaker-pyspark==1.4.5"
S3A_JARS = ("hadoop-aws-3.3.1.jar", "aws-java-sdk-bundle-1.11.901.jar")


def missing(dest: Path, names: tuple[str, ...] = S3A_JARS) -> list[str]:
    return [n for n in names if not (dest / n).is_file()]


def fetch_s3a(dest: Path) -> list[Path]:
    """Download the sdist with pip and extract the two s3a jars into `dest` (idempotent)."""
    dest.mkdir(parents=True, exist_ok=True)
    if not missing(dest):
        return [dest / n for n in S3A_JARS]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--no-binary", ":all:", "-d", tmp, S3A_PACKAGE], check=True)
        sdist = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                name = Path(member.name).name
                if name in S3A_JARS and "/jars/" in member.name:
                    src = tar.extractfile(member)
                    assert src is not None
                    partial = dest / (name + ".part")
                    partial.write_bytes(src.read())
                    partial.replace(dest / name)
    if gone := missing(dest):
        raise SystemExit(f"{S3A_PACKAGE} did not contain {', '.join(gone)}")
    return [dest / n for n in S3A_JARS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lakeinlet jars", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dest", default=".jars", help="folder to put the jars in")
    args = parser.parse_args(argv)
    for path in fetch_s3a(Path(args.dest)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
