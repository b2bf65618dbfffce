"""`python -m docgen`: write the generated pages; `--check`: exit 1 naming the stale ones."""

from __future__ import annotations

import argparse
import sys

from docgen import stale, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docgen", description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a page is stale")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for rel in old:
            print(f"docs/{rel} is stale: run `make docs`", file=sys.stderr)
        return 1 if old else 0
    for rel in write():
        print(f"wrote docs/{rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
