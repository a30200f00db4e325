"""Issue 19 §5, part of bench/reliability_bench.py: mutated inputs per reader, all readers in
forked children (bench/fuzz_chunks.py): the text readers (bench/text_fuzz.py), the trace file
readers (bench/trace_fuzz.py) and Parquet trace mutants (bench/parquet_fuzz.py).

TAILCAST_FUZZ_INPUTS (default 1 000 000, the issue's count) is the count per reader;
TAILCAST_FUZZ_SANDBOX_INPUTS (default 1 000) the count of damaged OTF2 archives read through
the user's path, `import_otf2` (a sandbox process per input, ~0.5 s of CPU each);
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

from tailcast.traces.otf2_sandbox import TIMEOUT_FLOOR_S

TARGETS = {**TEXT, **TRACE, "parquet_trace": PARQUET}
# `otf2_sandbox` costs ~0.5 CPU-s an input and runs 1,000: small chunks let both jobs work
# on it and keep the round robin even under a deadline. (`otf2` forks a process per input,
# bench/trace_fuzz.py, so its chunks need not be small any more.)
CHUNKS = {"otf2_sandbox": 20}
# An `otf2` input is a few processes (a fork, a decoder, its exit), each waiting for a core:
# on this machine at CPU pressure ~99%, seed 19 input 50101 (0.06 s alone) took 7.8 s, and
# at nice 19 went over 10 s. So `otf2` inputs get the sandbox's own wall limit (its floor:
# the seeds are small), after which import_otf2 gives up on an archive.
HANGS = {"otf2": TIMEOUT_FLOOR_S}
RESULTS = Path(__file__).resolve().parent / "results" / "reliability.json"


def how() -> str:
    return (
        f"forked children, {JOBS} at a time, chunks of {CHUNK:,} inputs ({CHUNKS} for "
        "otf2_sandbox) interleaved over the readers (bench/fuzz_chunks.py); each child under "
        f"a {MEMORY_LIMIT >> 30} GiB address-space limit; an input running over {HANG_S:g} s "
        f"of wall time ({HANGS}: the sandbox's timeout) is a hang (the child's "
        "process group is killed). A child's death or "
        "hang is a crash, recorded with its seed and input index, and its chunk resumes after "
        "that input. Each input is a seed mutated in the child and read there by the function "
        "a user's command calls, except OTF2, whose C library reads a damaged archive "
        "differently after other work in the same process (uninitialised memory): "
        "`otf2` reads each damaged archive (of small ones written by bench/trace_fuzz.py) in "
        "a process of its own forked by the child, running the sandbox child's code "
        "(otf2_sandbox.decode_into: decode_otf2 under the sandbox's address-space limit, the "
        "trace or the error written out) and read back as import_otf2 does "
        "(otf2_sandbox.outcome); that process dying, running out of memory or raising an "
        "untyped exception is a crash (import_otf2 would report an InputError). "
        "`otf2_sandbox` calls import_otf2 (the user's path: an interpreter per input) on "
        "those and on the sst-macro 10-rank archive. cpu_s are the children's (wait4, "
        "including their own children; not a hung input's process, killed with its group), "
        "max_input_s is wall time on a shared machine."
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
    sandbox = min(inputs, int(os.environ.get("TAILCAST_FUZZ_SANDBOX_INPUTS", "1000")))
    wall = os.environ.get("TAILCAST_FUZZ_WALL_S", "").strip()
    targets = selected()
    started = time.time()
    counts = {name: (sandbox if name == "otf2_sandbox" else inputs) for name in targets}
    deadline = started + float(wall) if wall else None
    runs = fuzz_readers(targets, counts, chunks=CHUNKS, deadline=deadline, hangs=HANGS)
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
    """`new`'s readers replace the same readers in `old`; totals are over all readers."""
    readers = dict((old or {}).get("readers", {}))
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
