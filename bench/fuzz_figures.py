"""Issue 19 §5, part of bench/reliability_bench.py: mutated inputs per reader, each reader in
child processes (bench/fuzz_chunks.py): the text readers (bench/text_fuzz.py), the trace
file readers (bench/trace_fuzz.py) and Parquet trace mutants (bench/parquet_fuzz.py).

TAILCAST_FUZZ_INPUTS (default 1 000 000, the issue's count) is the count per reader.
Readers that cost milliseconds an input get TAILCAST_FUZZ_SLOW_INPUTS instead (default
20 000; OTF2 ~50 ms an input, Parquet ~10 ms: 1 M would be hours of CPU here), and their
figures say how long 1 M would take. Reports accepted inputs, typed errors by type, crashes
(any other exception, or a dead process), the slowest input and the peak RSS."""

from __future__ import annotations

import os

from fuzz_chunks import fuzz_chunks
from parquet_fuzz import fuzz_parquet_isolated
from text_fuzz import READERS
from trace_fuzz import READERS as TRACE_READERS

SLOW_READERS = {"otf2"}


def fuzz_figures() -> dict[str, object]:
    inputs = int(os.environ.get("TAILCAST_FUZZ_INPUTS", "1000000"))
    slow_inputs = min(inputs, int(os.environ.get("TAILCAST_FUZZ_SLOW_INPUTS", "20000")))
    figures: dict[str, object] = {"inputs_per_reader": inputs, "slow_reader_inputs": slow_inputs}
    for reader in [*sorted(READERS), *TRACE_READERS]:
        n = slow_inputs if reader in SLOW_READERS else inputs
        figures[reader] = fuzz_chunks(reader, n, chunk=2_000 if reader in SLOW_READERS else 100_000)
    before = os.times()
    counts = fuzz_parquet_isolated(slow_inputs)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    figures["parquet_trace"] = {
        "inputs": counts.inputs,
        "accepted": counts.accepted,
        "typed_errors": dict(counts.typed_errors),
        "crashes": dict(counts.crashes),
        "crash_inputs_kept": counts.examples,
        "slow_inputs_over_1s": counts.slow,
        "max_input_s": round(counts.max_input_s, 4),
        "cpu_s": round(cpu, 1),
        "projected_cpu_min_for_1m": round(1e6 / (counts.inputs / cpu) / 60, 1) if cpu else None,
    }
    return figures
