"""The report names replays and measured runs by what they are (analysis/labels.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tailcast.analysis.labels import (
    SourceLabels,
    labelled_replays,
    replay_label,
    size_label,
    unique,
)
from tailcast.quickstart import bundled_dir
from tailcast.replay.fabric import load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import Catalog, ResultsDir


def test_a_replay_is_named_by_trace_fabric_and_parameters() -> None:
    row = {
        "replay_id": "0309f6b02f6441ddbdcd6edd58da103b",
        "application": "osu_alltoall",
        "trace_meta": json.dumps({"osu_sizes": "[1048576]", "osu_iterations": "200"}),
        "fabric": "lab",
        "seed": 0,
        "placement": "nodes:node[01-02,09-10]",
        "background": json.dumps(
            {"jobs": [], "traces": [{"path": "/tmp/bg-0.parquet", "placement": "4,5,12,13"}]}
        ),
    }
    assert replay_label(row) == (
        "osu_alltoall 1 MiB · lab · nodes node[01-02,09-10] · bg trace on endpoints 4,5,12,13"
    )
    synthetic = {
        "trace_id": "97290bedfbbc329c",
        "fabric": "marconi100",
        "seed": 3,
        "background_b": 0.3,
        "placement": "linear",
        "coll_overrides": "bcast=binomial",
        "background": json.dumps({"jobs": [{"pattern": "uniform"}] * 2, "traces": []}),
        "sweep_params": json.dumps({"fabric.routing": "ugal", "background_b": 0.3}),
    }
    assert replay_label(synthetic) == (
        "trace 97290bedfbbc329c · marconi100 · 2 bg jobs (uniform) · coll bcast=binomial"
        " · fabric.routing = ugal · background_b = 0.3 · seed 3"
    )


def test_labels_several_replays_share_are_numbered() -> None:
    assert unique([("a", "x"), ("b", "y"), ("c", "x")]) == {"a": "x #1", "b": "y", "c": "x #2"}


def test_size_labels() -> None:
    assert [size_label(s) for s in (4, 1024, 32768, 1 << 20, 1000, None)] == [
        "4 B",
        "1 KiB",
        "32 KiB",
        "1 MiB",
        "1000 B",
        "size ?",
    ]


def test_sources_are_named_from_the_store(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path / "store")
    for table in ("runs", "samples", "lab_runs"):
        shutil.copytree(bundled_dir() / table, results.table_dir(table))
    trace = bundled_dir() / "halo-4rank.parquet"
    first = replay_trace(trace, load_fabric("crossbar"), ReplayOptions(), results).replay_id
    again = replay_trace(trace, load_fabric("crossbar"), ReplayOptions(), results).replay_id
    other = replay_trace(trace, load_fabric("ideal"), ReplayOptions(seed=2), results).replay_id
    with Catalog(results) as cat:
        labels = dict((r["replay_id"], label) for r, label in labelled_replays(cat))
        assert labels == {
            first: "halo.py · crossbar #1",
            again: "halo.py · crossbar #2",
            other: "halo.py · ideal · seed 2",
        }
        run = cat.rows(
            "SELECT r.run_id FROM runs r JOIN lab_runs l USING (run_id) "
            "WHERE r.benchmark = 'alltoall' AND r.msg_size_bytes = 1048576 "
            "AND r.locality = 'different_islands' AND l.phase = 'cross-8' LIMIT 1"
        )[0]["run_id"]
        name = SourceLabels(cat)
    assert name(other) == "halo.py · ideal · seed 2"
    measured = name(f"SELECT latency_us FROM samples WHERE run_id = '{run}'")
    assert measured.startswith("alltoall 1 MiB · different_islands · background cross-8 · b = ")
    query = "SELECT latency_us FROM samples WHERE iteration > 3"
    assert name(query) == query  # nothing to name it by: shown as given
