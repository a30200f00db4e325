"""What issue 40's bar asks of a perfect model: the calibrated lab fabric (quickstart's fit,
seed 0) replays the 72 quickstart runs at several replay seeds, and each seed's replays are
compared with another seed's as if those were the measurement — the same model on both
sides, each run 200 iterations as measured, background gaps and detours drawn afresh. The
figures are those `lab compare` prints (runs within p50 ±15 % and p99 ±30 %, median KS):
how far sampling alone keeps a model that is exactly right from the bar of 58 of 72 and
KS ≤ 0.3.

`make bench` calls `run()` (bench/results/within_ceiling.json); alone:
.venv/bin/python bench/run.py within_ceiling
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.analysis.compare import compare_samples
from tailcast.calibration.from_campaign import calibrate_campaign
from tailcast.lab.compare import lab_runs, within_tolerances
from tailcast.quickstart import FIT, SIMULATION_FABRIC, QuickstartState, step_load
from tailcast.replay.fabric import load_fabric
from tailcast.store import Catalog, ResultsDir


def run(seeds: int = 5) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        state = QuickstartState(results=ResultsDir(d / "res"), report_dir=d / "rep", scratch=d)
        step_load(state)
        cal = calibrate_campaign(state.results, load_fabric(SIMULATION_FABRIC), FIT, d / "fit")
        with Catalog(state.results) as cat:
            runs = lab_runs(cat, "quickstart", None)
        replays = {}
        for seed in range(seeds):
            replayer = cal.replayer(None, d / f"seed{seed}", seed=seed)
            replays[seed] = {r["run_id"]: np.asarray(replayer.replay_run(r)[1]) for r in runs}
    pairs = []
    for model, measured in itertools.permutations(range(seeds), 2):
        by_size: dict[int, list[tuple[bool, float]]] = {}
        for r in runs:
            rid = r["run_id"]
            c = compare_samples(replays[measured][rid], replays[model][rid])
            p50, p99 = c.percentiles["p50"]["rel_error"], c.percentiles["p99"]["rel_error"]
            ok = within_tolerances(p50, p99)
            by_size.setdefault(int(r["msg_size_bytes"]), []).append((ok, c.ks_statistic))
        every = [x for v in by_size.values() for x in v]
        pair = {
            "model_seed": model,
            "measured_seed": measured,
            "within": sum(ok for ok, _ in every),
            "median_ks": round(float(np.median([ks for _, ks in every])), 3),
            "within_by_size": {s: sum(ok for ok, _ in v) for s, v in sorted(by_size.items())},
        }
        print(pair, file=sys.stderr, flush=True)
        pairs.append(pair)
    within = [p["within"] for p in pairs]
    return {
        "runs": len(runs),
        "iterations_per_run": 200,
        "pairs": pairs,
        "within_min_median_max": [min(within), float(np.median(within)), max(within)],
        "share_of_pairs_meeting_58": sum(w >= 58 for w in within) / len(within),
        "median_ks_max": max(p["median_ks"] for p in pairs),
        "notes": (
            "the same calibrated model as measurement and as replay, at different replay "
            "seeds: its runs' spread at 200 iterations is what a perfect model would show "
            "against the measured campaign"
        ),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
