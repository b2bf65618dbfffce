"""Job 2, the incremental loader, as the file for `spark-submit` (absolute imports: the file runs
outside its package); locally the same `main` is the console script `lakeinlet-load`:

    spark-submit --master yarn $(lakeinlet jars --packages --only s3a --only hudi) \\
        --conf spark.pyspark.python=python3 \\
        incremental/__main__.py run --drain --target-format hudi \\
        --changelog s3://lake/changelog --table s3://lake/orders --source-format json \\
        --schema "order_id BIGINT, customer STRING, amount DOUBLE, ts TIMESTAMP" --spark-scheme s3a
"""

from __future__ import annotations

from lakeinlet.incremental.job import main

if __name__ == "__main__":
    raise SystemExit(main())
