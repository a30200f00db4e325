"""Every benchmark of the OSU 7.4 suite the test setup built, run with every option its own
`--help` documents (and failing invocations), through Open MPI on this machine: each output
is parsed to exactly the values OSU printed, or ends in a typed error carrying OSU's text.
OMB-Py (python/run.py) likewise. Options that combine share one run to keep the time down;
each documented option of each benchmark is used at least once, and each of -D's three
forms, -s's sync modes and -w's window kinds on at least one benchmark each."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tailcast.collectors.osu_errors import (
    OsuError,
    OsuRankCountError,
    OsuUsageError,
    OsuValidationError,
)
from tailcast.collectors.osu_parse import parse_osu_output
from tailcast.collectors.osu_run import run_to_end
from tailcast.collectors.osu_suite import BANDWIDTH, BLOCKING, NONBLOCKING, SUITE, OsuBenchmark
from tests.collectors.osu_checks import assert_exact, assert_osu_words
from tests.slurm_fixture import MPI_ROOT_ENV

pytestmark = [pytest.mark.mpi, pytest.mark.slow]

RUN_TIMEOUT_S = 120
ALONE_TIMEOUT_S = 20
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
        # failed validation); otherwise never once it printed its title
        expected = (OsuUsageError, OsuValidationError)
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
    assert set(binaries) <= set(SUITE)
    assert {n for n in SUITE if not n.endswith("_persistent") or n.startswith(("bw", "bibw",
            "latency"))} == set(binaries)  # fmt: skip
    outcomes: Counter[str] = Counter()
    uncovered = []
    for n, (name, binary) in enumerate(sorted(binaries.items())):
        bench = SUITE[name]
        help_out, help_err, _ = _run(binary, Invocation("help", ["-h"], None))
        documented = _documented(help_out + help_err)
        plan = _plan(bench, documented, osu_home / "share", n)
        exercised = set().union(*(inv.options for inv in plan))
        uncovered += [f"{name} -{o}" for o in documented - exercised - {"d", "r"}]
        for inv in plan:
            stdout, stderr, rc = _run(binary, inv)
            context = f"{name} {inv.label}: rc={rc}\n{stdout}\n{stderr}"
            try:
                err = _check(stdout, stderr, rc)
                if err is None and inv.label == "combined":
                    _semantics(bench, inv, stdout, stderr)
            except AssertionError as exc:
                raise AssertionError(f"{context}\n{exc}") from None
            outcomes[type(err).__name__ if err else "parsed"] += 1
            if inv.label == "one process" and name not in ("init", "hello"):
                assert isinstance(err, (OsuRankCountError, OsuError)), context
    assert not uncovered, f"documented options never exercised: {uncovered}"
    # Real outcomes of both kinds, not one swallowing the other.
    assert outcomes["parsed"] > 300 and outcomes["OsuUsageError"] > 100, outcomes
    assert outcomes["OsuRankCountError"] > 40, outcomes


OMB_PY_RUNS = (
    ["--min", "1", "--max", "8", "--iterations", "10", "--skip", "2"],
    ["--min", "4", "--max", "4", "--iterations", "5", "--skip", "1", "--buffer", "numpy"],
    ["--min", "4", "--max", "4", "--iterations", "5", "--skip", "1", "--pickle"],
)


def test_omb_py_every_benchmark(osu_home: Path) -> None:
    """OMB-Py: the 7.4 list (python/README); mpi4py from this venv."""
    run_py = osu_home / "python" / "run.py"
    from tailcast.collectors.osu_suite import OMB_PY

    outcomes: Counter[str] = Counter()
    for name in OMB_PY:
        for args in OMB_PY_RUNS:
            argv = ["mpirun", "-np", "2", "--oversubscribe", sys.executable, str(run_py),
                    "--benchmark", name, *args]  # fmt: skip
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                env={**MPI_ROOT_ENV, "PATH": "/usr/bin:/bin"}, cwd=run_py.parent,
            )  # fmt: skip
            context = f"{name} {args}: rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            try:
                err = _check(proc.stdout, proc.stderr, proc.returncode)
            except AssertionError as exc:
                raise AssertionError(f"{context}\n{exc}") from None
            if err is None:
                out = parse_osu_output(proc.stdout, stderr=proc.stderr)
                assert out.omb_py and out.version is None and out.rows, context
            outcomes[type(err).__name__ if err else "parsed"] += 1
    assert outcomes["parsed"] >= 30, outcomes
