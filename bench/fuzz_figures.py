"""Issue 19 §5, part of bench/reliability_bench.py: mutated inputs per reader, all readers in
forked children (bench/fuzz_chunks.py): the text readers (bench/text_fuzz.py), the trace file
readers (bench/trace_fuzz.py) and Parquet trace mutants (bench/parquet_fuzz.py).

TAILCAST_FUZZ_INPUTS (default 1 000 000, the issue's count) is the count per reader;
TAILCAST_FUZZ_SANDBOX_INPUTS (default 1 000) the count of damaged OTF2 archives read through
the user's path, `import_otf2` (a sandbox process per input, ~0.5 s of CPU each);
TAILCAST_FUZZ_WALL_S (default: none) stops the run after that many seconds with what ran.
Reports accepted inputs, typed errors by type, crashes (any other exception, a dead process,
a hang) with the seed and index that replay them, the slowest input, peak RSS and CPU time.

`python bench/fuzz_figures.py` runs this part alone and replaces `fuzz` in
bench/results/reliability.json, keeping the other parts' figures."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from fuzz_chunks import CHUNK, HANG_S, JOBS, MEMORY_LIMIT, fuzz_readers
from parquet_fuzz import TARGET as PARQUET
from text_fuzz import TARGETS as TEXT
from trace_fuzz import TARGETS as TRACE

TARGETS = {**TEXT, **TRACE, "parquet_trace": PARQUET}
# The OTF2 bindings keep state across archives: after a few dozen damaged archives in one
# process, one that reads in 0.03 s alone spins (seed 19, inputs 250-284 then 285). So a
# fresh child per 20 archives (a fork costs ~60 ms here); the sandbox's children are fresh.
CHUNKS = {"otf2": 20, "otf2_sandbox": 20}
RESULTS = Path(__file__).resolve().parent / "results" / "reliability.json"


def how() -> str:
    return (
        f"forked children, {JOBS} at a time, chunks of {CHUNK:,} inputs ({CHUNKS} for OTF2) "
        "interleaved over the readers (bench/fuzz_chunks.py); each child under a "
        f"{MEMORY_LIMIT >> 30} GiB address-space limit; an input running over {HANG_S:g} s "
        "of wall time is a hang. A child's death or hang is a crash, recorded with its seed "
        "and input index, and its chunk resumes after that input. Each input is a seed "
        "mutated in the child and read there by the function a user's command calls, except "
        "OTF2: `otf2` calls otf2_decode.decode_otf2 (what the sandbox's child runs, no "
        "process per input) on small archives written by bench/trace_fuzz.py; "
        "`otf2_sandbox` calls import_otf2 (the user's path: a sandbox process per input) on "
        "those and on the sst-macro 10-rank archive. cpu_s are the children's (wait4, "
        "including their own children), max_input_s is wall time on a shared machine."
    )


def fuzz_figures() -> dict[str, object]:
    inputs = int(os.environ.get("TAILCAST_FUZZ_INPUTS", "1000000"))
    sandbox = min(inputs, int(os.environ.get("TAILCAST_FUZZ_SANDBOX_INPUTS", "1000")))
    wall = os.environ.get("TAILCAST_FUZZ_WALL_S", "").strip()
    started = time.time()
    counts = {name: (sandbox if name == "otf2_sandbox" else inputs) for name in TARGETS}
    deadline = started + float(wall) if wall else None
    runs = fuzz_readers(TARGETS, counts, chunks=CHUNKS, deadline=deadline)
    readers = {name: run.figures() for name, run in runs.items()}
    return {
        "how": how(),
        "inputs_per_reader": counts,
        "stopped_at_wall_s": float(wall) if wall else None,
        "wall_s": round(time.time() - started, 1),
        "readers": readers,
        "total_inputs": sum(r["inputs"] for r in readers.values()),
        "total_cpu_s": round(sum(r["cpu_s"] for r in readers.values()), 1),
    }


def main() -> int:
    figures = fuzz_figures()
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"results": {}}
    doc["results"]["fuzz"] = {**figures, "recorded_at": datetime.now(UTC).isoformat()}
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(RESULTS)
    print(json.dumps(figures["readers"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
