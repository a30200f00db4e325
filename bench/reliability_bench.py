"""Issue 19 soak figures: writers killed with SIGKILL at 100 random points (bench/kill_soak.py),
`replay run`, `collect watch` (on a private 4-node Slurm) and `replay sweep resume` killed at
100 random points each (bench/kill_commands.py), how promptly SIGINT / SIGTERM stop a long
`replay run` (CPU and wall time after the signal), and the readers' fuzzing
(bench/fuzz_figures.py). Counts, not pass/fail: the tests in tests/reliability assert the
same properties on fewer trials. TAILCAST_RELIABILITY_PARTS (comma list of kill, commands,
interrupt, fuzz; default all) runs a part of it."""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

from fuzz_figures import fuzz_figures, merged
from kill_command_soak import command_kill_figures
from kill_soak import kill_trials

REPO = Path(__file__).resolve().parents[1]
KILL_TRIALS = 100


def run() -> dict[str, object]:
    sys.path.insert(0, str(REPO))
    from tests.reliability.conftest import TAILCAST, signal_at_cpu, startup_cpu_s, write_halo

    parts = os.environ.get("TAILCAST_RELIABILITY_PARTS", "kill,commands,interrupt,fuzz")
    figures: dict[str, object] = {}
    if "fuzz" in parts:
        figures["fuzz"] = merged(None, fuzz_figures())
    with tempfile.TemporaryDirectory(prefix="tailcast-reliability-") as scratch:
        work = Path(scratch)
        if "kill" in parts:
            figures["sigkill_writers"] = asdict(kill_trials(work / "store", KILL_TRIALS))
        if "commands" in parts:
            figures["sigkill_commands"] = command_kill_figures(work / "commands", KILL_TRIALS)
        if "interrupt" not in parts:
            return figures
        trace = write_halo(work / "halo.parquet", 8000)
        env = {**os.environ, "TAILCAST_HOME": str(work / "home")}
        startup = startup_cpu_s(env)
        for mode, signum in (("--in-memory", signal.SIGINT), ("--stream", signal.SIGTERM)):
            argv = [TAILCAST, "replay", "run", str(trace), mode, "--fabric", "torus-4x4x4"]
            stopped = signal_at_cpu([*argv, "--no-messages"], env, startup + 2.0, signum)
            figures[f"replay_{mode.strip('-')}_{signal.Signals(signum).name}"] = {
                "exit_status": stopped.returncode,
                "wall_after_signal_s": round(stopped.wall_after_s, 3),
                "cpu_after_signal_s": round(stopped.cpu_after_s, 3),
                "files_left": sum(1 for p in (work / "home").rglob("*") if p.is_file()),
            }
    return figures
