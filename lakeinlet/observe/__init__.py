"""What the operator notebooks read and plot: the changelog, the target's commits, the ledger, the DLQ.
Read-only (a DLQ peek counts as one receive of each message); needs the `notebooks` extra."""
