"""One OSU Micro-Benchmarks run under the agent: the real OSU binary, with the PMPI tracer
preloaded in its timing mode, so OSU's summary row and every iteration of its loop are kept.

The tracer's files go to a hidden directory under the results root (ranks on other nodes
write there too, so it must be on a shared file system, as the results are) and are removed
once read. Benchmarks whose loop tailcast does not sample (one-sided, multi-pair, start-up)
run without the tracer and store OSU's rows only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tailcast.agent.osu_samples import IterationTimes, iteration_times
from tailcast.agent.runners import RunOutcome, sample_rows
from tailcast.collectors.launcher import Launcher
from tailcast.collectors.osu_errors import OsuTimedOutError
from tailcast.collectors.osu_output import OsuOutput, result_rows
from tailcast.collectors.osu_run import (
    OsuRequest,
    find_osu_binary,
    osu_argv,
    osu_version,
    run_osu,
)
from tailcast.collectors.osu_suite import (
    NONBLOCKING,
    OTHER,
    PT2PT_BANDWIDTH,
    OsuBenchmark,
    benchmark,
)
from tailcast.errors import InputError, UsageError
from tailcast.traces.capture.build import build_tracer
from tailcast.traces.capture.timing import RECORD, read_timing_dir

# Calls one iteration makes at most per rank, to size the tracer's buffer so that it does not
# write(2) inside OSU's loop: osu_bw a 64-message window, Waitall, ack and two clock readings;
# the non-blocking tests' overlap loop a dozen clock readings and MPI_Tests. The buffer is
# capped: a longer run flushes it every 8 M calls.
_CALLS_PER_ITERATION = {PT2PT_BANDWIDTH: 2 * 64 + 8, NONBLOCKING: 64}
_BUFFER_BYTES = (8 << 20, 256 << 20)


def _tracer_env(
    workdir: Path, bench: OsuBenchmark, warmup: int, iterations: int
) -> tuple[dict[str, str], Path]:
    library = build_tracer()
    workdir.mkdir(parents=True, exist_ok=True)
    raw = Path(tempfile.mkdtemp(prefix=".osu-timing-", dir=workdir))
    preload = os.environ.get("LD_PRELOAD", "")
    calls = (warmup + iterations) * _CALLS_PER_ITERATION.get(bench.loop, 8)
    buffer = min(max(_BUFFER_BYTES[0], calls * RECORD.itemsize), _BUFFER_BYTES[1])
    env = {
        "LD_PRELOAD": f"{library}:{preload}" if preload else str(library),
        "TAILCAST_TRACE_DIR": str(raw),
        "TAILCAST_TRACE_MODE": "timing",
        "TAILCAST_TRACE_BUFFER_BYTES": str(buffer),
    }
    return env, raw


def _sample_tables(
    bench: OsuBenchmark, times: IterationTimes, per_rank: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(samples, warmup_samples) rows: latencies per rank, or rank 0's bandwidth."""
    timed_bw, warm_bw = times.bandwidth_mb_s(True), times.bandwidth_mb_s(False)
    if timed_bw is not None and warm_bw is not None:
        return (
            [{"iteration": i, "bandwidth_mb_s": float(v)} for i, v in enumerate(timed_bw)],
            [{"iteration": i, "bandwidth_mb_s": float(v)} for i, v in enumerate(warm_bw)],
        )
    return sample_rows(times.timed_us, per_rank), sample_rows(times.warmup_us, per_rank)


def run_osu_benchmark(
    launcher: Launcher,
    slots: int,
    name: str,
    size: int,
    iterations: int,
    warmup: int,
    timeout_s: float,
    workdir: Path,
    osu_dir: Path | None = None,
    per_rank: bool = True,
) -> RunOutcome:
    """Runs OSU benchmark `name` at one message size on `slots` ranks (pt2pt tests on 2)."""
    try:
        bench = benchmark(name)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    binary = find_osu_binary(bench.name, osu_dir)
    version = osu_version(binary)
    ranks = bench.ranks_for(slots)
    req = OsuRequest(bench.name, size, iterations, warmup)
    env: dict[str, str] = {}
    raw: Path | None = None
    if bench.loop != OTHER:
        env, raw = _tracer_env(workdir, bench, warmup, iterations)
    argv = launcher.argv(ranks, osu_argv(binary, version, req), env)
    out: OsuOutput | None = None
    samples: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    try:
        try:
            out, argv = run_osu(launcher, ranks, binary, version, req, timeout_s, env)
        except OsuTimedOutError:
            if raw is None:
                raise
            # stopped inside the first (only) size: OSU printed no row, the tracer kept
            # every iteration the ranks finished
        if raw is not None:
            times = _times(bench, raw, req, partial=out is None or out.partial)
            if times is not None:
                samples = _sample_tables(bench, times, per_rank)
    finally:
        if raw is not None:
            shutil.rmtree(raw, ignore_errors=True)
    partial = out is None or out.partial
    versions = {"osu": version, "osu_binary": str(binary)}
    if raw is not None:
        versions["osu_samples"] = "tailcast PMPI tracer, timing mode"
        versions["tracer"] = env["LD_PRELOAD"].split(":")[0]
    if partial:
        versions["partial_reason"] = out.partial_reason if out else f"timed out ({timeout_s:g} s)"
    return RunOutcome(
        samples=samples[0],
        osu_results=result_rows(out, bench.name) if out else [],
        argv=argv,
        mpi_library=launcher.version(),
        versions=versions,
        iterations=len(samples[0]) or iterations,
        warmup_samples=samples[1],
        ranks=ranks,
        partial=partial,
    )


def _times(bench: OsuBenchmark, raw: Path, req: OsuRequest, partial: bool) -> IterationTimes | None:
    """The per-iteration times; a partial run keeps what every rank finished (or nothing
    when a rank left no file)."""
    try:
        ranks = read_timing_dir(raw)
        return iteration_times(
            bench, ranks, req.warmup, req.iterations, req.size_bytes, str(raw), partial
        )
    except InputError:
        if partial:
            return None
        raise
