"""Running a fuzzer in child processes of `chunk` inputs each (issue 19 §5): an input that
kills the interpreter (a native library aborting, a Rust panic, the address-space limit) is
counted as a crash and the fuzzing goes on with the next chunk; a chunk that never ends is
counted as a hang. Readers are bench/text_fuzz.py's and bench/trace_fuzz.py's; figures give
the rate (inputs per CPU-second of the children), their peak RSS and the CPU time 1 M inputs
would take."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from text_fuzz import FuzzCounts

CHUNK_TIMEOUT_S = 3600
MEMORY_LIMIT = 4 << 30  # address space per child: a runaway allocation ends as a crash

CHILD = """
import json, resource, sys
sys.path.insert(0, sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[5]), resource.RLIM_INFINITY))
from text_fuzz import READERS, fuzz
from trace_fuzz import fuzz_trace_reader
name, n, seed = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = fuzz(name, n, seed) if name in READERS else fuzz_trace_reader(name, n, seed)
print(json.dumps({"inputs": c.inputs, "accepted": c.accepted, "typed": dict(c.typed_errors),
                  "crashes": dict(c.crashes), "slow": c.slow, "max_s": c.max_input_s,
                  "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def fuzz_chunks(name: str, inputs: int, seed: int = 19, chunk: int = 100_000) -> dict[str, Any]:
    counts = FuzzCounts()
    rss_kb = 0
    before = os.times()
    for k, start in enumerate(range(0, inputs, chunk)):
        n = min(chunk, inputs - start)
        argv = [sys.executable, "-c", CHILD, str(Path(__file__).parent), name, str(n),
                str(seed + k), str(MEMORY_LIMIT)]  # fmt: skip
        try:
            child = subprocess.run(
                argv, capture_output=True, text=True, errors="replace", timeout=CHUNK_TIMEOUT_S
            )
        except subprocess.TimeoutExpired:
            counts.crashes[f"chunk of {n} took over {CHUNK_TIMEOUT_S} s (hang)"] += 1
            continue
        if child.returncode != 0:
            last = child.stderr.strip().splitlines()
            counts.crashes[f"process died ({child.returncode}): {(last or [''])[-1][:100]}"] += 1
            counts.inputs += 1  # the inputs before it in the chunk are not counted
            continue
        doc = json.loads(child.stdout)
        counts.inputs += doc["inputs"]
        counts.accepted += doc["accepted"]
        counts.typed_errors.update(doc["typed"])
        counts.crashes.update(doc["crashes"])
        counts.slow += doc["slow"]
        counts.max_input_s = max(counts.max_input_s, doc["max_s"])
        rss_kb = max(rss_kb, doc["rss_kb"])
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    rate = counts.inputs / cpu if cpu > 0 else 0.0
    return {
        "inputs": counts.inputs,
        "accepted": counts.accepted,
        "typed_errors": dict(counts.typed_errors),
        "crashes": dict(counts.crashes),
        "slow_inputs_over_1s": counts.slow,
        "max_input_s": round(counts.max_input_s, 4),
        "peak_rss_mb": round(rss_kb / 1024, 1),
        "cpu_s": round(cpu, 1),
        "inputs_per_cpu_s": round(rate, 1),
        "projected_cpu_min_for_1m": round(1e6 / rate / 60, 1) if rate else None,
    }
