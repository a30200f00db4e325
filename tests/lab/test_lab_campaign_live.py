"""`tailcast lab calibrate` and `tailcast lab campaign` on the real network lab: calibration
finds each level's shaped rate; a campaign phase starts real background MPI jobs on their
nodes, measures beside them, records which share a link, and a re-run skips what is done."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.slurm_fixture import SCRIPT, LocalCluster

pytestmark = [pytest.mark.slurm, pytest.mark.mpi, pytest.mark.slow]

SPEC = """
[campaign]
name = "t"
benchmarks = ["alltoall"]
sizes = ["32K"]
iterations = 10
warmup = 2
interval_ms = 0
settle_s = 2.0
[foreground]
same_group = "node[01-04]"
different_islands = "node[01-02,09-10]"
[background]
size = "64K"
gap_ms = 50
gaps = "exponential"
[[phase]]
name = "none"
jobs = []
[[phase]]
name = "cross"
jobs = ["node[05-06,13-14]"]
"""


def _tailcast(cluster: LocalCluster, home: Path, *args: str, timeout: float = 900) -> str:
    env = cluster.full_env(TAILCAST_HOME=str(home))
    res = subprocess.run(
        [sys.executable, "-m", "tailcast", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_calibration_measures_each_level(lab_cluster: LocalCluster, tmp_path: Path) -> None:
    out = _tailcast(
        lab_cluster, tmp_path / "home", "lab", "calibrate", "--workdir", str(tmp_path / "w"),
        "--ping-iterations", "200", "--bw-window", "8", "--bw-iterations", "4", "--json",
    )  # fmt: skip
    doc = json.loads(out)
    lab = lab_cluster.lab
    assert lab is not None
    for level, rate in doc["rate_bit_s"].items():
        nominal = lab["links"][level]["rate_mbit"] * 1e6
        assert 0.85 * nominal <= rate <= 1.02 * nominal, (level, rate)
    islands = {
        n: i for i, groups in lab["islands"].items() for g in groups for n in lab["groups"][g]
    }
    a, b = doc["classes"]["different_islands"]["nodes"]
    assert islands[a] != islands[b]
    assert doc["overhead_us"] > 0 and doc["link_latency_us"] >= 0


def test_campaign_phase_runs_beside_real_background_jobs(
    lab_cluster: LocalCluster, tmp_path: Path
) -> None:
    spec = tmp_path / "t.toml"
    spec.write_text(SPEC)
    home, work = tmp_path / "home", tmp_path / "work"
    before = _links(lab_cluster)
    out = _tailcast(
        lab_cluster, home, "lab", "campaign", str(spec), "--workdir", str(work), "--json"
    )
    rows = json.loads(out)
    assert {(r["phase"], r["placement"]) for r in rows} == {
        ("none", "same_group"),
        ("none", "different_islands"),
        ("cross", "same_group"),
        ("cross", "different_islands"),
    }
    shares = {(r["phase"], r["placement"]): r["shares_links"] for r in rows}
    assert shares[("cross", "different_islands")] and not shares[("cross", "same_group")]
    cross = [r for r in rows if r["phase"] == "cross"]
    assert all(r["bg_nodes"] == [["node05", "node06", "node13", "node14"]] for r in cross)
    assert all(r["bg_gaps"] == "exponential" and r["bg_gap_ms"] == 50 for r in cross)
    assert sum(r["bg_calls"][0] for r in cross) > 0  # the background job really ran
    runs = {
        r["run_id"]: r for r in pq.read_table(home / "runs").to_pylist()
    }  # one row per measured run
    for r in rows:
        b = runs[r["run_id"]]["b_before"]
        assert b == (0.25 if r["phase"] == "cross" else 0.0), (r, b)
    # each background call sends 2 nodes x 2 peers x 64 KiB across the island link
    after = _links(lab_cluster)
    moved = after["island1->island2"] - before["island1->island2"]
    assert moved >= 4 * 64 * 1024 * cross[0]["bg_calls"][0]
    tails = json.loads(_tailcast(lab_cluster, home, "lab", "tails", "--campaign", "t", "--json"))
    by = {(t["phase"], t["placement"]): t for t in tails}
    assert set(by) == set(shares)
    for (phase, _), t in by.items():
        assert t["iterations"] == 10 and t["p99_us"] >= t["p50_us"] > 0
        if phase == "none":
            assert t["p50_ratio"] == 1.0 and t["b"] == 0.0
        else:
            assert t["p99_ratio"] == pytest.approx(
                t["p99_us"] / by[("none", t["placement"])]["p99_us"]
            )
    # done phases are skipped when the campaign runs again
    again = _tailcast(
        lab_cluster, home, "lab", "campaign", str(spec), "--workdir", str(work), "--json"
    )
    assert json.loads(again) == []


B_SPEC = """
[campaign]
name = "b"
benchmarks = ["alltoall"]
sizes = ["1M"]
iterations = 40
warmup = 3
interval_ms = 0
settle_s = 3.0
[foreground]
different_islands = "node[01-02,09-10]"
[background]
size = "1M"
gap_ms = 300
[[phase]]
name = "none"
jobs = []
[[phase]]
name = "shared"
jobs = ["node[05-06,13-14]", "node[07-08,15-16]"]
[[phase]]
name = "apart"
jobs = ["node[05-08]", "node[13-16]"]
"""


def test_alltoall_tail_grows_with_b_only_on_shared_links(
    lab_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Issue 18: with b = 0.5 of background alltoall on the uplinks and the island link the
    measurement uses, the 1 MiB alltoall's p99 at least doubles; the same b placed inside
    groups 2 and 4 (no link in common) moves it by less than 20 %."""
    spec = tmp_path / "b.toml"
    spec.write_text(B_SPEC)
    home = tmp_path / "home"
    _tailcast(lab_cluster, home, "lab", "campaign", str(spec), "--workdir", str(tmp_path / "w"))
    tails = json.loads(_tailcast(lab_cluster, home, "lab", "tails", "--campaign", "b", "--json"))
    by = {t["phase"]: t for t in tails}
    assert by["shared"]["b"] == by["apart"]["b"] == 0.5
    assert by["shared"]["shares_links"] and not by["apart"]["shares_links"]
    assert by["shared"]["p99_ratio"] >= 2.0, by
    assert abs(by["apart"]["p99_ratio"] - 1.0) < 0.20, by


def _links(cluster: LocalCluster) -> dict[str, int]:
    res = subprocess.run([str(SCRIPT), "links", str(cluster.dir)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return {r["link"]: int(r["bytes"]) for r in json.loads(res.stdout)}
