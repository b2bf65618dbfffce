"""Job 1, the event source, as a file for spark-submit (and `python -m lakeinlet.sources`):

    spark-submit --master local[2] sources/__main__.py \\
        --queue-url https://sqs.us-east-1.amazonaws.com/123456789012/lakeinlet-events \\
        --changelog s3://lake/changelog --until-empty

The job runs on the driver only (no Spark work); `lakeinlet` must be installed there.
"""

from __future__ import annotations

from lakeinlet.sources.job import main

if __name__ == "__main__":
    raise SystemExit(main())
