"""Entry point for `spark-submit` (absolute imports: the file runs outside its package).

    spark-submit --master yarn --jars "$LAKEINLET_JARS_LIST" \\
        --conf spark.pyspark.python=python3 \\
        incremental/__main__.py run --drain \\
        --changelog s3://lake/changelog --table s3://lake/orders --source-format json \\
        --schema "order_id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP" --spark-scheme s3a

On EMR drop `--jars` (the platform's S3 connector is used) and pass `--spark-scheme s3`.
Locally the same `main` is the console script `lakeinlet-load`.
"""

from __future__ import annotations

from lakeinlet.incremental.job import main

if __name__ == "__main__":
    raise SystemExit(main())
