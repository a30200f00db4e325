"""Start-up budget of the CLI: help and version load no numerical or storage stack, and
`tailcast --help` stays well under half a CPU-second (the bench records the real figure)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_root import SUBCOMMANDS

EXE = [sys.executable, "-m", "tailcast"]
# Seconds of start-up each, or hundreds of MB: loaded only by the commands that use them.
HEAVY = ("numpy", "scipy", "sklearn", "matplotlib", "duckdb", "pyarrow", "pandas", "jinja2")
HEAVY += ("mpi4py", "otf2", "diptest")


def imported_modules(*args: str) -> set[str]:
    """Every module `tailcast ARGS` imports (from `python -X importtime`)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tailcast", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    names = set()
    for line in out.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "tailcast.cli" in names  # the parse found the listing (main is __main__)
    return names


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), *[(name, "--help") for name in SUBCOMMANDS]],
    ids=lambda a: " ".join(a),
)
def test_help_and_version_import_no_heavy_stack(args: tuple[str, ...]) -> None:
    heavy = sorted(m for m in imported_modules(*args) if m.split(".")[0] in HEAVY)
    assert not heavy, f"`tailcast {' '.join(args)}` imports {heavy}"


def test_replay_run_help_imports_no_heavy_stack() -> None:
    heavy = sorted(
        m for m in imported_modules("replay", "run", "--help") if m.split(".")[0] in HEAVY
    )
    assert not heavy


def test_a_sub_command_imports_only_its_own_cli_module() -> None:
    cli = {m for m in imported_modules("trace", "--help") if m.startswith("tailcast.cli.")}
    assert "tailcast.cli.trace" in cli
    assert not cli & {f"tailcast.cli.{name}" for name in SUBCOMMANDS if name != "trace"}


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("--debug", "--version")])
def test_root_help_and_version_import_no_sub_command_module(args: tuple[str, ...]) -> None:
    """The root's table of sub-commands comes from main.SUBCOMMANDS, not from building
    every sub-command's group (~0.1 CPU-s)."""
    cli = {m for m in imported_modules(*args) if m.startswith("tailcast.cli.")}
    assert not cli & {f"tailcast.cli.{name}" for name in SUBCOMMANDS}


def test_streamed_replay_without_store_imports_no_store_stack(tmp_path: Path) -> None:
    """`replay run --no-store --stream` reads natively and writes nothing: no DuckDB, no
    pyarrow, no numpy (their import costs more CPU than a small replay; numpy alone was
    ~240 M of the ~605 M instructions of a tiny one)."""
    from tailcast.traces.io import write_trace
    from tailcast.traces.synth.osu import osu_trace

    table, meta = osu_trace("allreduce", 8, [64, 4096], 50)
    trace = write_trace(table, tmp_path / "t.parquet", meta)
    names = imported_modules("replay", "run", "--no-store", "--stream", str(trace))
    assert "tailcast.replay.stream" in names
    heavy = ("duckdb", "pyarrow", "pandas", "numpy")
    stack = sorted(m for m in names if m.split(".")[0] in heavy)
    assert not stack, f"a streamed --no-store replay imports {stack}"
    # Nor OpenSSL (hashlib's _hashlib maps libcrypto: the digests are for stored replays)
    # nor importlib.resources (a bundled fabric is a file next to its module).
    assert not names & {"_hashlib", "importlib.resources"}, names & {
        "_hashlib",
        "importlib.resources",
    }


def cpu_seconds(*args: str) -> float:
    """User + system CPU of one `tailcast ARGS` process."""
    proc = subprocess.Popen([*EXE, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return usage.ru_utime + usage.ru_stime


def test_help_costs_under_half_a_cpu_second() -> None:
    # Best of three: a shared CI machine can slow any single run; a regression to an eager
    # scipy/matplotlib import costs 2 s and fails every run.
    best = min(cpu_seconds("--help") for _ in range(3))
    assert best < 0.5, f"tailcast --help took {best:.3f} CPU-s"


def test_cli_constants_match_their_sources() -> None:
    """Option defaults the CLI declares itself, so as not to import their modules."""
    from tailcast.analysis.fitting import DEFAULT_TIME_LIMIT_S
    from tailcast.cli import agent, analyze, collect, replay
    from tailcast.collectors.queue_budget import QUEUE_BUDGET_S
    from tailcast.collectors.squeue import BACKENDS
    from tailcast.collectors.utilisation import DEFAULT_THRESHOLD
    from tailcast.replay import background_b

    assert analyze.DEFAULT_TIME_LIMIT_S == DEFAULT_TIME_LIMIT_S
    assert collect.BACKENDS == BACKENDS
    assert agent.DEFAULT_THRESHOLD == DEFAULT_THRESHOLD
    assert agent.QUEUE_BUDGET_S == QUEUE_BUDGET_S
    assert replay.DEFAULT_LOAD == background_b.DEFAULT_LOAD
    assert replay.DEFAULT_BYTES == background_b.DEFAULT_BYTES


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    import tailcast

    assert tailcast._installed_version() == version("tailcast")
