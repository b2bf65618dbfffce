"""What the operator notebooks read and plot: the changelog, the target's commits, the ledger, the DLQ."""
