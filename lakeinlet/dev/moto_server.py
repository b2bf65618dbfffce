"""moto's server, run as `MotoServer` starts it: moto's own `main` with the list of its service
modules read once. moto lists its package folder on every request (an `isdir` per service) to
match the request's host, which costs more CPU than a small S3 or SQS call itself."""

from __future__ import annotations

import sys

from moto import backends
from moto.server import main


def run(argv: list[str]) -> None:
    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules
    main(argv)


if __name__ == "__main__":
    run(sys.argv[1:])
