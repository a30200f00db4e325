"""Issue 19 §2 without Slurm: writers killed with SIGKILL at random points (the soak with
100 trials is bench/reliability_bench.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from kill_soak import kill_trials  # bench/, shared with the soak bench


def test_sigkilled_writers_leave_only_whole_runs(tmp_path: Path) -> None:
    counts = kill_trials(tmp_path / "store", trials=8)
    print(counts)
    assert (counts.corrupt, counts.duplicated, counts.missing, counts.incomplete) == (0, 0, 0, 0)
    # At most the run being written when each kill came is found beyond those reported.
    assert counts.reported <= counts.found <= counts.reported + counts.trials
    assert counts.found > 0
