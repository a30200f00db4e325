"""Collectors against the real local Slurm (tests/slurm_fixture.py: 16 nodes of 4 cores,
topology/tree with 2 islands x 2 groups x 4 nodes). Background jobs are pinned with -w so
the expected b is computed by hand from what the test submitted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tailcast.collectors.squeue import read_queue
from tailcast.collectors.topology import DIFFERENT_ISLANDS, SAME_GROUP, read_scontrol_topology
from tailcast.store import ResultsDir, read_table

pytestmark = pytest.mark.slurm

TAILCAST = [sys.executable, "-m", "tailcast"]

# name -> (nodes pinned with -w, node count); each job takes 1 core per node.
BACKGROUND = {
    "two": ("node[01-02]", 2),
    "three": ("node[02-04]", 3),  # shares node02 with "two": counted twice in N_c'
    "six": ("node[05-10]", 6),
    "single": ("node11", 1),  # single-node: only in N_a
}
OWN = ("node[12-13]", 2)


def _quiet_queue(cluster: Any) -> None:
    cluster.cancel_all()
    deadline = time.monotonic() + 60
    while cluster.run(["squeue", "-h", "-o", "%i %T"]).strip():  # active jobs only
        if time.monotonic() > deadline:
            pytest.fail("queue did not drain before the test")
        time.sleep(0.5)


def _submit_background(cluster: Any, workdir: Path) -> list[str]:
    ids = []
    for nodes, count in BACKGROUND.values():
        ids.append(
            cluster.sbatch(
                ["-N", str(count), "-w", nodes, "--ntasks-per-node=1", "--cpus-per-task=1"],
                "#!/bin/bash\nsleep 600\n",
                workdir,
            )
        )
    # Pending for sure: may not start for an hour.
    ids.append(cluster.sbatch(["-N", "2", "--begin=now+3600"], "#!/bin/bash\nsleep 1\n", workdir))
    for job in ids[:-1]:
        cluster.wait_state(job, {"RUNNING"}, timeout=60)
    return ids


def test_collect_snapshot_b_matches_hand_count(
    slurm_cluster: Any, pyslurm_ready: None, tmp_path: Path, results_home: Path
) -> None:
    _quiet_queue(slurm_cluster)
    _submit_background(slurm_cluster, tmp_path)
    # By hand. Multi-node running jobs: two, three, six (+ own when included).
    # Unique nodes: 01-04 and 05-10 = 10; with duplication 2 + 3 + 6 = 11 (node02 twice);
    # all allocated incl. the single-node job: 11 + 1 = 12. N_t = 16.
    expected_excluded = {"n_c": 10, "n_c_dup": 11, "n_a_dup": 12, "n_t": 16}
    # Own job node[12-13] included: +2 unique, +2 duplicated, +2 allocated.
    expected_included = {"n_c": 12, "n_c_dup": 13, "n_a_dup": 14, "n_t": 16}
    out_ex, out_in = tmp_path / "excluded.json", tmp_path / "included.json"
    cmd = " ".join(TAILCAST)
    script = (
        "#!/bin/bash\nset -e\n"
        f"{cmd} collect snapshot --json > {out_ex}\n"
        f"{cmd} collect snapshot --json --include-own-job > {out_in}\n"
    )
    own = slurm_cluster.sbatch(
        [
            "-N",
            "2",
            "-w",
            OWN[0],
            "--ntasks-per-node=1",
            f"--export=ALL,TAILCAST_HOME={results_home}",
        ],
        script,
        tmp_path,
    )
    slurm_cluster.wait_state(own, {"COMPLETED", "FAILED", "GONE"}, timeout=120)
    assert out_in.exists() and out_in.stat().st_size, (tmp_path / f"slurm-{own}.out").read_text()
    excluded, included = json.loads(out_ex.read_text()), json.loads(out_in.read_text())
    for doc, want, flag in (
        (excluded, expected_excluded, True),
        (included, expected_included, False),
    ):
        assert {k: doc[k] for k in want} == want
        n_c, n_c_dup, n_a = want["n_c"], want["n_c_dup"], want["n_a_dup"]
        assert doc["b_simple"] == pytest.approx(n_c / 16)
        assert doc["b"] == pytest.approx(n_c / 16 * n_c_dup / n_a)
        assert doc["own_job_id"] == own and doc["own_job_excluded"] is flag
        # auto: pyslurm first when it imports (the test setup installs it into the venv)
        assert doc["pending_jobs"] == 1 and doc["source"] == "pyslurm"
    util = [r for f in ResultsDir().files("utilisation") for r in read_table(f).to_pylist()]
    assert sorted(r["b"] for r in util) == pytest.approx(sorted([excluded["b"], included["b"]]))

    # The -o fallback reads the same queue to the same counts (own job has ended now).
    fmt = read_queue("squeue-format")
    js = read_queue("squeue-json")
    key = sorted((j.job_id, j.state, j.nodes) for j in js.jobs)
    assert sorted((j.job_id, j.state, j.nodes) for j in fmt.jobs) == key
    slurm_cluster.cancel_all()


def test_scontrol_topology_live(slurm_cluster: Any) -> None:
    topo = read_scontrol_topology()
    assert sorted(topo.paths) == slurm_cluster.nodes
    assert topo.classify(["node01", "node04"]).locality == SAME_GROUP
    spread = topo.classify(["node01", "node05", "node09", "node13"])
    assert (spread.locality, spread.levels_spanned) == (DIFFERENT_ISLANDS, 3)


def test_collect_watch_sigterm_keeps_snapshots(slurm_cluster: Any, results_home: Path) -> None:
    env = {**os.environ, "TAILCAST_HOME": str(results_home)}
    proc = subprocess.Popen(
        [
            *TAILCAST,
            "collect",
            "watch",
            "--interval",
            "0.3",
            "--duration",
            "120",
            "--flush-every",
            "1000",
            "--json",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # SIGTERM once three polls are reported (start-up time varies with the machine's load)
    assert proc.stderr is not None
    early: list[str] = []
    deadline = time.monotonic() + 300
    while sum(" b=" in ln for ln in early) < 3 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        early.append(line)
    proc.send_signal(signal.SIGTERM)
    stdout, rest = proc.communicate(timeout=60)
    stderr = "".join(early) + rest
    assert proc.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["stopped_by_signal"] == signal.SIGTERM and summary["snapshots"] >= 3
    polled = [ln for ln in stderr.splitlines() if " b=" in ln]
    rows = [r for f in ResultsDir().files("utilisation") for r in read_table(f).to_pylist()]
    assert len(rows) == len(polled) == summary["snapshots"]
