"""Landing zones as producers write them: one module per producer writes its keys and bytes into a
bucket and returns what a loader must make of them (`corpus.Produced`); `routes.toml` loads them."""
