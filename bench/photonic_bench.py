"""Issue 14's budget: a 12x12x12 photonic torus replay of seed 002's workload (1728 nodes x
100 messages = 172,800 messages, 80 % 4 KB / 20 % 512 KB) must take under 30 s CPU.

Whole commands measured (CPU of the child, peak RSS): `tailcast trace synth seed002` once,
then `tailcast replay run` on the bundled `photonic-segment-torus-12` (segment switching)
and on the same fabric with circuit switching, whose makespan ratio is the seed's
speed-up. Writes bench/results/photonic.json.
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


def _replay(trace: Path, fabric: str, home: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "tailcast.cli.main", "replay", "run", str(trace)]
    argv += ["--fabric", fabric, "--json"]
    out, cpu_s, rss_mib, exact = run_measured(argv, home)
    summary = json.loads(out[out.index("{") :])
    return {"cpu_s": round(cpu_s, 2), "peak_rss_mib": round(rss_mib, 1),
            "peak_rss_exact": exact, "summary": summary}  # fmt: skip


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        trace = home / "seed002.parquet"
        argv = [sys.executable, "-m", "tailcast.cli.main", "trace", "synth", "seed002"]
        argv += ["-o", str(trace), "--ranks", str(RANKS), "--seed", "1"]
        _, synth_cpu, _, _ = run_measured(argv, home)
        circuit = home / "circuit.toml"
        text = bundled_fabrics()[FABRIC]
        circuit.write_text(re.sub(r'switching = "segment"', 'switching = "circuit"', text))
        seg = _replay(trace, FABRIC, home)
        cir = _replay(trace, str(circuit), home)
    return {
        "messages": RANKS * 100,
        "synth_cpu_s": round(synth_cpu, 2),
        "segment_replay": seg,
        "circuit_replay": cir,
        "budget_cpu_s": 30.0,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
