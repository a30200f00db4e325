"""Issue 14's budget: a 12x12x12 photonic torus replay of seed 002's workload (1728 nodes x
100 messages = 172,800 messages, 80 % 4 KB / 20 % 512 KB) must take under 30 s CPU.

Whole commands measured (CPU of the child, peak RSS): `tailcast trace synth seed002` once,
then `tailcast replay run` on the bundled `photonic-segment-torus-12` (segment switching)
and on the same fabric with circuit switching, whose makespan ratio is the seed's
speed-up. A replay still running after LIMIT_S of CPU is stopped and recorded as
unfinished (it was, when this bench was written: see the issue-14 note). Writes
bench/results/segment.json.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from child_usage import run_measured

from tailcast.replay.fabric import bundled_fabrics

RANKS = 1728
FABRIC = "photonic-segment-torus-12"
LIMIT_S = 300  # CPU seconds: ten times the budget


def _replay(trace: Path, fabric: str, home: Path) -> dict[str, Any]:
    argv = ["prlimit", f"--cpu={LIMIT_S}", sys.executable, "-m", "tailcast"]
    argv += ["replay", "run", str(trace), "--fabric", fabric, "--json", "--no-store"]
    try:
        run = run_measured(argv, home)
    except RuntimeError as exc:  # killed by the CPU limit (SIGXCPU / SIGKILL)
        return {"finished": False, "cpu_limit_s": LIMIT_S, "error": str(exc)[-300:]}
    summary = json.loads(run.stdout[run.stdout.index("{") :])
    return {
        "finished": True,
        "cpu_s": round(run.cpu_s, 2),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "makespan_us": summary["total_time_us"],
    }


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        trace = home / "seed002.parquet"
        argv = [sys.executable, "-m", "tailcast", "trace", "synth", "seed002"]
        argv += ["-o", str(trace), "--ranks", str(RANKS), "--seed", "1"]
        synth = run_measured(argv, home)
        circuit = home / "circuit.toml"
        text = bundled_fabrics()[FABRIC]
        circuit.write_text(re.sub(r'switching = "segment"', 'switching = "circuit"', text))
        seg = _replay(trace, FABRIC, home)
        cir = _replay(trace, str(circuit), home)
    return {
        "messages": RANKS * 100,
        "synth_cpu_s": round(synth.cpu_s, 2),
        "segment_replay": seg,
        "circuit_replay": cir,
        "budget_cpu_s": 30.0,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
