"""What the host model costs the replay engine (issue 40: host noise < 10 % of replay CPU when
on): the halo + allreduce trace of replay_bench.py replayed on the bundled `crossbar` and
`ideal` fabrics as they are (no noise, overheads not occupying the CPU) and with their
`[host]` table extended by
- `lab noise`: Poisson detours of the order `tailcast calibrate` fits on the bundled lab
  campaign (2,000/s, lognormal lengths of mean 40 µs, sigma 2; the fit now gives 354/s of
  mean 40 µs, sigma 2, plus the background's own ~2,000/s of 20 µs beside ~50 MB/s);
- `dense noise`: 100,000 detours/s of 1 µs (a detour every few simulated messages);
- `noise, no detours`: one detour per 10^6 s, so none in the replay: what the detour
  bookkeeping costs by itself (the first of the cost's parts; the others: the detours'
  draws and their effect on what is simulated, e.g. longer runs, other event orders);
- `occupy`: `overheads_occupy_cpu = true`;
- `occupy + lab noise`.
Variants alternate round by round in this process (they share the machine's load); each
figure is the best CPU time of one `_core.replay` call, and its ratio to the plain fabric.

`make bench` calls `run()` (bench/results/host_cost.json); alone: .venv/bin/python
bench/run.py host_cost
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_bench import PER_ITERATION, halo_allreduce

from tailcast import _core
from tailcast.replay.fabric import Fabric, load_fabric, parse_fabric

LAB_NOISE = {
    "kind": "poisson",
    "rate_per_s": 2000.0,
    "length": "lognormal",
    "length_ns": 40_000.0,
    "length_sigma": 2.0,
}
DENSE_NOISE = {"kind": "poisson", "rate_per_s": 100_000.0, "length_ns": 1000.0}
NO_DETOURS = {"kind": "poisson", "rate_per_s": 1e-6, "length_ns": 1000.0}
VARIANTS: dict[str, dict[str, Any]] = {
    "plain": {},
    "lab noise": {"noise": LAB_NOISE},
    "dense noise": {"noise": DENSE_NOISE},
    "noise, no detours": {"noise": NO_DETOURS},
    "occupy": {"overheads_occupy_cpu": True},
    "occupy + lab noise": {"overheads_occupy_cpu": True, "noise": LAB_NOISE},
}


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def variant(base: Fabric, host: dict[str, Any]) -> Fabric:
    """`base` with its `[host]` table extended by `host` (a `noise` entry as `[host.noise]`)."""
    table = {**base.table.get("host", {}), **host}
    noise = table.pop("noise", None)
    head = base.toml_text[: base.toml_text.find("[host]")]
    lines = ["[host]", *(f"{k} = {_value(v)}" for k, v in table.items())]
    if noise:
        lines += ["[host.noise]", *(f"{k} = {_value(v)}" for k, v in noise.items())]
    return parse_fabric(head + "\n".join(lines) + "\n", f"{base.name} + {host}", base.name)


def run(actions: int = 400_000, rounds: int = 5) -> dict[str, Any]:
    rows = []
    for fabric in ("crossbar", "ideal"):
        base = load_fabric(fabric)
        for ranks in (16, 256):
            trace = halo_allreduce(ranks, max(1, actions // (ranks * PER_ITERATION)), 16384)
            scenarios = {
                name: _core.Scenario(variant(base, host).spec, "linear", compute_scale=0.0)
                for name, host in VARIANTS.items()
            }
            best = dict.fromkeys(scenarios, float("inf"))
            simulated: dict[str, float] = {}
            for _ in range(rounds):
                for name, scenario in scenarios.items():
                    cpu0 = time.process_time()
                    result = _core.replay(scenario, [trace])
                    best[name] = min(best[name], time.process_time() - cpu0)
                    simulated[name] = result.jobs[0].total_time_ns / 1000.0
            row = {
                "fabric": fabric,
                "ranks": ranks,
                "actions": result.stats["actions"],
                "best_cpu_s": {k: round(v, 4) for k, v in best.items()},
                "cpu_ratio_to_plain": {k: round(v / best["plain"], 3) for k, v in best.items()},
                "simulated_total_us": simulated,
            }
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    noisy = ("lab noise", "dense noise", "noise, no detours")
    noise_ratios = [r["cpu_ratio_to_plain"][k] for r in rows for k in noisy]
    return {
        "recorded_at": datetime.now(UTC).isoformat(),
        "rounds": rounds,
        "rows": rows,
        "max_noise_cpu_ratio": max(noise_ratios),
        "goal_noise_cpu_ratio": 1.10,
        "notes": (
            "best_cpu_s: least CPU time of one _core.replay call over the rounds, variants "
            "alternating; ideal has o = 0, so occupancy changes nothing there but the "
            "bookkeeping. Closed-form collectives stay on with noise (they ask the detours "
            "where the event path does), not with occupancy. 'noise, no detours' is the "
            "bookkeeping alone; lab noise's extra cost over it is inherent to what is "
            "simulated: its lognormal detours (sigma 2) stretch the run 3x (16 ranks) to "
            "300x (256 ranks), so every rank draws detours across that span (ln, exp, cos "
            "per detour), and on the flow fabric desynchronised ranks re-rate flows more "
            "often for fewer events."
        ),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
