"""The changelog table, the one contract between the jobs: the event source's writer (with the
blind-append fast path beside it), the loader's reads (with the tail fast path) and maintenance.
Its schema is `schema.CHANGELOG_SCHEMA`."""
