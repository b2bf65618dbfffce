"""Figures of the operator's frames (`lakeinlet.observe.frames`): changelog commits, load batches, lag.
Each returns a matplotlib `Figure` (no pyplot state), which a notebook shows as its cell's result."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator


def plot_changelog_commits(commits: pd.DataFrame) -> Figure:
    """Events per changelog commit over time (one bar per commit, labelled with its version)."""
    fig = Figure(figsize=(8, 3), layout="constrained")
    ax = fig.subplots()
    t = commits["timestamp"].dt.tz_convert(None)
    width = _bar_width(t)
    ax.bar(t, commits["events"], width=width, color="tab:blue")
    for when, n, v in zip(t, commits["events"], commits["version"], strict=True):
        ax.annotate(f"v{v}", (when, n), ha="center", va="bottom", fontsize=8)
    ax.set(title="Changelog: events per commit", xlabel="commit time (UTC)", ylabel="events")
    ax.margins(y=0.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.autofmt_xdate()
    return fig


def _bar_width(t: pd.Series) -> float:
    """A bar width in days: a third of the smallest gap between commits (at least 0.2 s)."""
    gaps = t.sort_values().diff().dropna().dt.total_seconds()
    seconds = max(float(gaps[gaps > 0].min()) / 3 if (gaps > 0).any() else 1.0, 0.2)
    return seconds / 86_400


def plot_load_batches(batches: pd.DataFrame) -> Figure:
    """Per load commit: source objects (loaded / not loaded) and bytes read beside the data files
    and bytes written. Resets and empty re-reads show as zero-height groups; so do batches whose
    commit did not record what it wrote (Delta tables written before lakeinlet recorded it)."""
    loads = batches[batches["operation"] == "load"].reset_index(drop=True)
    loads = loads.fillna({"data_files": 0, "data_bytes": 0}).astype({"data_files": int, "data_bytes": int})
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    x, w = loads.index.to_numpy(), 0.38
    left.bar(x - w / 2, loads["loaded"], w, color="tab:blue", label="objects loaded")
    left.bar(x - w / 2, loads["not_loaded"], w, bottom=loads["loaded"], color="tab:red",
             label="objects not loaded")
    left.bar(x + w / 2, loads["data_files"], w, color="tab:orange", label="data files written")
    left.set(title="Files per load batch", ylabel="files")
    right.bar(x - w / 2, loads["source_bytes"] / 1024, w, color="tab:blue", label="source KiB read")
    right.bar(x + w / 2, loads["data_bytes"] / 1024, w, color="tab:orange", label="Parquet KiB written")
    right.set(title="Bytes per load batch", ylabel="KiB")
    for ax in (left, right):
        ax.set_xticks(x, [f"v{v}" for v in loads["version"]], rotation=_rotation(loads["version"]))
        ax.set_xlabel("target version")
        ax.margins(y=0.25)
        ax.legend(fontsize=8)
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylim(0, max([1, *loads["objects"], *loads["data_files"]]) * 1.3)  # room for the legend
    return fig


def _rotation(versions: pd.Series) -> int:
    """Slanted tick labels for long versions (a Hudi commit's version is its instant time)."""
    return 30 if versions.astype(str).str.len().max() > 6 else 0


def plot_lag(lag: pd.DataFrame) -> Figure:
    """The end-to-end lag distribution, and where the time went (queue, changelog, load)."""
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    s = lag["lag_s"].dropna()
    left.hist(s, bins=min(20, max(5, s.size)), color="tab:blue")
    if not s.empty:
        for q, style in ((0.5, "--"), (0.95, ":")):
            left.axvline(s.quantile(q), color="black", linestyle=style, label=f"p{int(q * 100)}")
        left.legend(fontsize=8)
    left.set(title="Lag: event time → loaded", xlabel="seconds", ylabel="objects")
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    stages = ["queue_s", "changelog_s", "load_s"]
    data = [lag[c].dropna() for c in stages]
    right.boxplot(data, tick_labels=["S3 → received", "received → changelog", "changelog → target"])
    right.set(title="Where the time went", ylabel="seconds")
    right.tick_params(axis="x", labelsize=8)
    return fig
