"""Every benchmark of the OSU 7.4 suite the test setup built, run with every option its own
`--help` documents (and failing invocations), through Open MPI on this machine: each output
is parsed to exactly the values OSU printed, or ends in a typed error carrying OSU's text.
OMB-Py (python/run.py) likewise. Options that combine share one run to keep the time down;
each documented option of each benchmark is used at least once, and each of -D's three
forms, -s's sync modes and -w's window kinds on at least one benchmark each."""

from __future__ import annotations

import re
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tailcast.collectors.osu_errors import (
    OsuError,
    OsuNoRowsError,
    OsuUsageError,
    OsuValidationError,
)
from tailcast.collectors.osu_parse import parse_osu_output
from tailcast.collectors.osu_run import run_to_end
from tailcast.collectors.osu_suite import (
    BANDWIDTH,
    BLOCKING,
    NONBLOCKING,
    OMB_PY,
    PERSISTENT_COLLECTIVES,
    SUITE,
    OsuBenchmark,
)
from tests.collectors.osu_checks import assert_exact, assert_osu_words
from tests.slurm_fixture import MPI_ROOT_ENV

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

RUN_TIMEOUT_S = 120
ALONE_TIMEOUT_S = 20
WORKERS = 3  # runs at once: most of a run is mpirun starting up, not computing
SYNC = ("pscw", "fence", "lock", "flush", "flush_local", "lock_all")
WINDOWS = ("create", "allocate", "dynamic")


@dataclass
class Invocation:
    label: str
    args: list[str]
    ranks: int | None = 2  # None: started alone, as an MPI singleton (no mpirun)
    options: set[str] = field(default_factory=set)  # the documented letters it exercises


def _documented(help_text: str) -> set[str]:
    return set(re.findall(r"^  -(\w), --", help_text, re.MULTILINE))


def _plan(bench: OsuBenchmark, documented: set[str], share: Path, n: int) -> list[Invocation]:
    """The runs for one benchmark (the n-th of the suite, to rotate -D's forms)."""
    base = ["-m", "1:16"] if bench.sized else []
    base += ["-i", "20", "-x", "2"]
    ranks = 4 if bench.name.startswith(("neighbor", "ineighbor")) else 2
    combined, used = list(base), {"m", "i", "x"} & documented
    flags = {
        "f": ["-f"],
        "c": ["-c"],
        "u": ["-u", "1"],
        "z": ["-z"],
        "T": ["-T", "all"],
        "M": ["-M", "1048576"],
        "a": ["-a", "8"],
        "l": ["-l"],
        "k": ["-k", "rotate"],
        "t": ["-t", "2:2"] if bench.name in ("latency_mt", "latency_mp") else ["-t", "10"],
        "W": ["-W", "8"],
        "b": ["-b", "multiple"],
        "p": ["-p", "1"],
        "R": ["-R", "0"],
    }
    for letter, args in flags.items():
        if letter in documented:
            combined += args
            used.add(letter)
    plan = [Invocation("combined", combined, ranks, used)]
    ddt = ("cont", "vect:2:1", f"indx:{share / 'ddt_sample.txt'}")[n % 3]
    extra = {
        # -G runs alone: OSU 7.4 segfaults plotting with -T all (osu_util_graph.c)
        "G": [("G", ["-G", "tty"])],
        "D": [("D", ["-D", ddt])],
        "z": [("z", ["-z50,90"])],
        "T": [("T", ["-m", "1:2", "-i", "5", "-x", "1", "-T", "mpi_int"])],
        "m": [("m", ["-m", "8", "-i", "5", "-x", "1"])],
        "k": [("k", ["-k", "fixed:1"])],
        "N": [("N", ["-N", "cart:2:1"]), ("N", ["-N", f"graph:{share / 'nhbrhd_graph.adj'}"])],
        "V": [("V", ["-m", "1:4", "-i", "5", "-x", "1", "-V"])],
        "s": [("s", ["-s", s]) for s in SYNC],
        "w": [("w", ["-w", w]) for w in WINDOWS],
    }
    for letter, runs in extra.items():
        if letter in documented:
            for opt, args in runs:
                full = args if "-m" in args else base + args
                plan.append(Invocation(f"{opt}:{' '.join(args)}", full, ranks, {opt}))
    # Failing invocations (and the informational ones), started as singletons.
    for letter, args in (("h", ["-h"]), ("v", ["-v"]), ("P", ["-P", "PAPI_TOT_INS"]),
                         ("I", ["-I"])):  # fmt: skip
        if letter in documented:
            plan.append(Invocation(letter, args, None, {letter}))
    plan.append(Invocation("invalid option", ["-Q"], None))
    if bench.sized:
        plan.append(Invocation("negative size", ["-m", "-5"], None))
    plan.append(Invocation("one process", base, None))
    return plan


def _run(binary: Path, inv: Invocation) -> tuple[str, str, int]:
    """Runs one invocation; one that overstays (osu_multi_lat waits forever for a partner
    when started alone) is stopped like the agent stops one, output kept."""
    env = {**MPI_ROOT_ENV, "PATH": "/usr/bin:/bin"}
    argv = [str(binary), *inv.args]
    if inv.ranks is not None:
        argv = ["mpirun", "-np", str(inv.ranks), "--oversubscribe", *argv]
    done = run_to_end(argv, RUN_TIMEOUT_S if inv.ranks else ALONE_TIMEOUT_S, env)
    return done.stdout, done.stderr, done.returncode


def _check(stdout: str, stderr: str, rc: int) -> OsuError | None:
    """Parses one run: exact values, or a typed error with OSU's words (an InputError, i.e.
    output the parser calls garbled, propagates and fails the test)."""
    try:
        out = parse_osu_output(stdout, stderr=stderr, returncode=rc)
    except OsuError as err:
        assert_osu_words(err, stdout, stderr)
        # OSU exits 0 on some errors (-N cart:2:1 on 4 ranks, the atomic one-sided tests'
        # failed validation) and when no size of the range is measured (a header, no row);
        # otherwise never once it printed its title
        expected = (OsuUsageError, OsuValidationError, OsuNoRowsError)
        clean = rc == 0 and "# OSU" in stdout and not isinstance(err, expected)
        assert not clean, "a clean run that printed its title ended in an error"
        return err
    assert_exact(out, stdout)
    assert out.partial or rc == 0, f"exit status {rc} but not marked partial"
    return None


def _semantics(bench: OsuBenchmark, inv: Invocation, stdout: str, stderr: str) -> None:
    """What the combined run must show when OSU honours an option."""
    out = parse_osu_output(stdout, stderr=stderr)
    if not out.rows or out.partial:
        return
    if "f" in inv.options and bench.loop == BLOCKING:
        assert {"Min Latency(us)", "Max Latency(us)", "Iterations"} <= set(out.columns)
    if "f" in inv.options and bench.loop == NONBLOCKING:
        assert "Pure Comm.(us)" in out.columns and "Min Comm.(us)" in out.columns
    if "c" in inv.options:
        assert {r.validation for r in out.rows} <= {"Pass", "passed", "skipped"}
        assert all(r.validation for r in out.rows) and not out.failed_validation()
    if "z" in inv.options and bench.sized and not any("OSU printed none" in n for n in out.notes):
        tails = [r.tail_bandwidth_mb_s if bench.metric == BANDWIDTH else r.tail_latency_us
                 for r in out.rows]  # fmt: skip
        assert all(set(t) == {50.0, 90.0, 99.0} for t in tails)
    if "T" in inv.options:
        assert {r.datatype for r in out.rows} <= {"MPI_CHAR", "MPI_INT", "MPI_FLOAT"}
    if bench.metric == BANDWIDTH:
        assert all(r.avg_latency_us is None for r in out.rows)  # never in a latency column
        assert any(r.bandwidth_mb_s is not None for r in out.rows)


def _binaries(osu_home: Path) -> dict[str, Path]:
    root = osu_home / "libexec" / "osu-micro-benchmarks" / "mpi"
    return {p.name.removeprefix("osu_"): p for p in root.rglob("osu_*") if p.is_file()}


def test_every_benchmark_every_documented_option(osu_home: Path) -> None:
    binaries = _binaries(osu_home)
    # The suite table knows every binary this build made, and the build made all but the
    # MPI-4 persistent collectives (Open MPI 4.1 is MPI-3.1).
    assert set(SUITE) - set(PERSISTENT_COLLECTIVES) == set(binaries)
    names = sorted(binaries)
    with ThreadPoolExecutor(WORKERS) as pool:
        helps = list(pool.map(lambda n: _run(binaries[n], Invocation("help", ["-h"], None)), names))
        plans = {
            name: _plan(SUITE[name], _documented(out + err), osu_home / "share", n)
            for n, (name, (out, err, _)) in enumerate(zip(names, helps, strict=True))
        }
        jobs = [(name, inv) for name in names for inv in plans[name]]
        results = list(pool.map(lambda job: _run(binaries[job[0]], job[1]), jobs))
    uncovered = [
        f"{name} -{o}"
        for name, (out, err, _) in zip(names, helps, strict=True)
        for o in _documented(out + err) - set().union(*(i.options for i in plans[name]))
    ]
    assert not uncovered, f"documented options never exercised: {uncovered}"
    outcomes: Counter[str] = Counter()
    for (name, inv), (stdout, stderr, rc) in zip(jobs, results, strict=True):
        context = f"{name} {inv.label}: rc={rc}\n{stdout}\n{stderr}"
        try:
            err = _check(stdout, stderr, rc)
            if err is None and inv.label == "combined":
                _semantics(SUITE[name], inv, stdout, stderr)
        except AssertionError as exc:
            raise AssertionError(f"{context}\n{exc}") from None
        outcomes[type(err).__name__ if err else "parsed"] += 1
        if inv.label == "one process" and name not in ("init", "hello"):
            assert err is not None, context
        if isinstance(err, OsuNoRowsError):
            # Only where OSU measures nothing: -v prints its title alone, and -T mpi_int on
            # -m 1:2 holds no whole MPI_INT.
            assert inv.label == "v" or inv.label.startswith("T:-m 1:2"), context
    # Real outcomes of every kind, not one swallowing the others (847 runs here: 361 parsed,
    # 291 usage, 106 without a row — 58 -v, 48 -T mpi_int below 4 B —, 60 process-count,
    # 7 validation errors — OSU 7.4's -c of reductions on MPI_CHAR fails at 16 B —, 22 other
    # errors such as osu_bw_fan_in's one-node refusal).
    assert outcomes["parsed"] > 300 and outcomes["OsuUsageError"] > 250, outcomes
    assert outcomes["OsuNoRowsError"] > 50, outcomes
    assert outcomes["OsuRankCountError"] > 50 and outcomes["OsuValidationError"] > 0, outcomes


OMB_PY_RUNS = (
    ["--min", "1", "--max", "8", "--iterations", "10", "--skip", "2"],
    ["--min", "4", "--max", "4", "--iterations", "5", "--skip", "1", "--buffer", "numpy"],
    ["--min", "4", "--max", "4", "--iterations", "5", "--skip", "1", "--pickle"],
)


def test_omb_py_every_benchmark(osu_home: Path) -> None:
    """OMB-Py: the 7.4 list (python/README); mpi4py from this venv."""
    run_py = osu_home / "python" / "run.py"
    # every benchmark with the defaults, and with numpy buffers or pickling in turn
    jobs = [
        (n, args) for i, n in enumerate(OMB_PY) for args in (OMB_PY_RUNS[0], OMB_PY_RUNS[1 + i % 2])
    ]

    def launch(job: tuple[str, list[str]]) -> tuple[str, str, int]:
        argv = ["mpirun", "-np", "2", "--oversubscribe", sys.executable, str(run_py),
                "--benchmark", job[0], *job[1]]  # fmt: skip
        done = run_to_end(argv, RUN_TIMEOUT_S, {**MPI_ROOT_ENV, "PATH": "/usr/bin:/bin"})
        return done.stdout, done.stderr, done.returncode

    with ThreadPoolExecutor(WORKERS) as pool:
        results = list(pool.map(launch, jobs))
    outcomes: Counter[str] = Counter()
    for (name, args), (stdout, stderr, rc) in zip(jobs, results, strict=True):
        context = f"{name} {args}: rc={rc}\n{stdout}\n{stderr}"
        try:
            err = _check(stdout, stderr, rc)
        except AssertionError as exc:
            raise AssertionError(f"{context}\n{exc}") from None
        if err is None:
            out = parse_osu_output(stdout, stderr=stderr, returncode=rc)
            assert out.omb_py and out.version is None and out.rows, context
        outcomes[type(err).__name__ if err else "parsed"] += 1
    # 7.4's allreduce/reduce_scatter break on mpi4py 4 (a float count): OSU's TypeError
    assert outcomes["parsed"] >= 25, outcomes
