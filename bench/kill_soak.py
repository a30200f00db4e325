"""SIGKILL at random points of a real writer process (issue 19 §2), shared by
tests/reliability/test_kill_writer.py and bench/reliability_bench.py (100 trials).

The writer stores runs the agent's way (samples naming their `runs` row, then the row) in a
loop and reports each completed run on stdout; it is killed with SIGKILL after a random
delay. Afterwards every reported run must be in the store whole, at most the one being
written when the kill came may be there too, and nothing else is visible."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tailcast.store import Catalog, ResultsDir

# "ready" comes after the imports a write needs: at a load of 18 on 2 cores importing
# pyarrow took 1.4 s and the first run 0.7 s more, so kills 0-1.5 s after an earlier "ready"
# all landed before any run was stored (8 of 8 trials: found 0).
WRITER = """
import sys, uuid
import pyarrow.parquet
from tailcast.store import ResultsDir
results = ResultsDir(sys.argv[1])
n = int(sys.argv[2])
print("ready", flush=True)
while True:
    rid = uuid.uuid4().hex
    with results.all_or_nothing():
        results.write("samples", {"run_id": [rid] * n, "iteration": list(range(n)),
                                  "latency_us": [1.0] * n}, name=rid, part_of=f"runs/{rid}")
        results.write("runs", [{"run_id": rid, "benchmark": "bcast", "msg_size_bytes": 4,
                                "ranks": 2, "iterations": n}], name=rid)
    print(rid, flush=True)
"""


@dataclass
class SoakCounts:
    trials: int = 0
    reported: int = 0  # runs the writers said were complete
    found: int = 0  # runs in the store
    duplicated: int = 0
    corrupt: int = 0  # unreadable files
    missing: int = 0  # reported but not found
    incomplete: int = 0  # found without all their samples
    pending_hidden: int = 0  # parts of killed runs, left out of every query


def kill_trials(root: Path, trials: int, samples: int = 500, seed: int = 19) -> SoakCounts:
    """`trials` writers into `root`, each killed with SIGKILL 0-1.5 s after it is ready."""
    rng = random.Random(seed)
    counts = SoakCounts()
    reported: set[str] = set()
    for _ in range(trials):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(samples)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 1.5))
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        reported.update(out.split())
        counts.trials += 1
    with Catalog(ResultsDir(root)) as catalog:
        counts.corrupt = sum(len(info.problems) for info in catalog.tables.values())
        counts.pending_hidden = sum(len(info.pending) for info in catalog.tables.values())
        runs = [r["run_id"] for r in catalog.rows("SELECT run_id FROM runs")]
        per_run = {
            r["run_id"]: r["n"]
            for r in catalog.rows("SELECT run_id, count(*) AS n FROM samples GROUP BY run_id")
        }
    counts.reported = len(reported)
    counts.found = len(set(runs))
    counts.duplicated = len(runs) - len(set(runs))
    counts.missing = len(reported - set(runs))
    counts.incomplete = sum(per_run.get(r, 0) != samples for r in runs)
    counts.incomplete += sum(r not in set(runs) for r in per_run)  # samples shown without run
    return counts
