"""The changelog table, the one contract between the jobs: its schema, the event source's writer
(with the blind-append fast path fenced beside it), the loader's reads (with the tail fast path)
and maintenance."""
