"""Issue 19 §5, part of bench/reliability_bench.py: mutated inputs per reader, all readers in
forked children (bench/fuzz_chunks.py): the text readers (bench/text_fuzz.py), the trace file
readers (bench/trace_fuzz.py) and Parquet trace mutants (bench/parquet_fuzz.py).

TAILCAST_FUZZ_INPUTS (default 1 000 000, the issue's count) is the count per reader;
TAILCAST_FUZZ_WALL_S (default: none) stops the run after that many seconds with what ran;
TAILCAST_FUZZ_READERS (comma list, default all) runs only those readers.
Reports accepted inputs, typed errors by type, crashes (any other exception, a dead process,
a hang) with the seed and index that replay them, the slowest input, peak RSS and CPU time.

`python bench/fuzz_figures.py` runs this part alone and replaces the readers it ran in `fuzz`
of bench/results/reliability.json, keeping the other readers' and parts' figures (each
reader's figures carry the run they come from)."""

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
RESULTS = Path(__file__).resolve().parent / "results" / "reliability.json"


def how() -> str:
    return (
        f"forked children, {JOBS} at a time, chunks of {CHUNK:,} inputs interleaved over the "
        f"readers (bench/fuzz_chunks.py); each child under a {MEMORY_LIMIT >> 30} GiB "
        f"address-space limit; an input running over {HANG_S:g} s of wall time is a hang (the "
        "child's process group is killed). A child's death or hang is a crash, recorded with "
        "its seed and input index, and its chunk resumes after that input. Each input is a seed "
        "mutated in the child and read there by the function a user's command calls (OTF2: "
        "import_otf2, tailcast's own reader, on one damaged file of a small archive written by "
        "bench/trace_fuzz.py). cpu_s are the children's (wait4, including their own children; "
        "not a hung input's process, killed with its group), max_input_s is wall time on a "
        "shared machine."
    )


def selected() -> dict[str, object]:
    """The targets TAILCAST_FUZZ_READERS names (all when unset)."""
    names = [n.strip() for n in os.environ.get("TAILCAST_FUZZ_READERS", "").split(",") if n.strip()]
    unknown = sorted(set(names) - set(TARGETS))
    if unknown:
        raise SystemExit(
            f"TAILCAST_FUZZ_READERS: unknown reader(s) {unknown}; "
            f"expected some of {sorted(TARGETS)}"
        )
    return {n: t for n, t in TARGETS.items() if not names or n in names}


def fuzz_figures() -> dict[str, object]:
    inputs = int(os.environ.get("TAILCAST_FUZZ_INPUTS", "1000000"))
    wall = os.environ.get("TAILCAST_FUZZ_WALL_S", "").strip()
    targets = selected()
    started = time.time()
    counts = dict.fromkeys(targets, inputs)
    deadline = started + float(wall) if wall else None
    runs = fuzz_readers(targets, counts, deadline=deadline)
    run = {
        "recorded_at": datetime.now(UTC).isoformat(),
        "wall_s": round(time.time() - started, 1),
        "stopped_at_wall_s": float(wall) if wall else None,
    }
    readers = {
        name: {**r.figures(), "run": {**run, "requested_inputs": counts[name]}}
        for name, r in runs.items()
    }
    return {"how": how(), "readers": readers}


def merged(old: dict[str, object] | None, new: dict[str, object]) -> dict[str, object]:
    """`new`'s readers replace the same readers in `old` (readers no longer fuzzed are
    dropped); totals are over all readers."""
    readers = {n: r for n, r in (old or {}).get("readers", {}).items() if n in TARGETS}
    readers.update(new["readers"])
    return {
        "how": new["how"],
        "readers": readers,
        "total_inputs": sum(r["inputs"] for r in readers.values()),
        "total_cpu_s": round(sum(r["cpu_s"] for r in readers.values()), 1),
    }


def main() -> int:
    figures = fuzz_figures()
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"results": {}}
    old = doc["results"].get("fuzz")
    doc["results"]["fuzz"] = {**merged(old, figures), "recorded_at": datetime.now(UTC).isoformat()}
    tmp = RESULTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(RESULTS)
    print(json.dumps(figures["readers"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
