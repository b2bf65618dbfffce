"""Job 1, the event source, as the file for spark-submit (it runs on the driver only, no Spark work;
`lakeinlet` must be installed there) and for `python -m lakeinlet.sources`:
`spark-submit sources/__main__.py --queue-url "$QUEUE_URL" --changelog s3://lake/changelog --until-empty`"""

from __future__ import annotations

from lakeinlet.sources.job import main

if __name__ == "__main__":
    raise SystemExit(main())
