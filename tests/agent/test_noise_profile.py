"""`tailcast agent noise-profile --local`: the fixed-work-quantum loop on this host finds
detours (a shared 2-core machine loses its CPU to other processes many times a second),
stores one profile per node, and writes the [host.noise] table the engine reads; agent runs
pick the newest profile of their nodes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tailcast.collectors.noise_profile import (
    current_profiles,
    host_noise_toml,
    parse_fwq_output,
    profile_rows,
    stored_profiles,
)
from tailcast.errors import InputError
from tailcast.replay.fabric import load_fabric, parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import ResultsDir
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace


def test_local_profile_finds_detours_and_is_stored(results_home: Path, tmp_path: Path) -> None:
    toml = tmp_path / "noise.toml"
    out = subprocess.run(
        [sys.executable, "-m", "tailcast", "agent", "noise-profile", "--local",
         "--seconds", "1", "--toml", str(toml), "--json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    (summary,) = json.loads(out.stdout)
    assert summary["detours"] > 0 and summary["detours_per_s"] > 0
    assert 0 < summary["detour_p50_ns"] <= summary["detour_max_ns"]
    # the work itself is the fastest quantum, about the 20 µs asked for; one clock
    # reading (the loop's floor) is far below the detour threshold
    assert 10_000 < summary["quantum_ns"] < 40_000
    assert 0 < summary["clock_overhead_ns"] < 1000
    (row,) = stored_profiles(ResultsDir(results_home))
    assert row["profile_id"] == summary["profile_id"] and row["node"] == summary["node"]
    assert len(row["detours_ns"]) == summary["detours"]
    assert all(d > row["threshold_ns"] for d in row["detours_ns"])
    assert abs(row["window_ns"] / 1e9 - 1.0) < 0.2
    table = tomllib.loads(toml.read_text())["host"]["noise"]
    assert table["kind"] == "empirical"
    assert table["work_ns"] == row["quanta"] * row["quantum_ns"] <= row["window_ns"]
    assert table["detours_ns"] == row["detours_ns"]
    # The engine takes the table as the host model of a fabric, and the profile's detours
    # (here ~1 % of the time in ~1,000 detours a second) slow some of a replay's 3 µs
    # iterations, where the quiet fabric gives every one the same time.
    fabric = parse_fabric(load_fabric("ideal").toml_text + toml.read_text(), str(toml))
    table_, meta = osu_trace("allreduce", 4, [64], 3000)
    trace = write_trace(table_, tmp_path / "allreduce.parquet", meta)
    quiet = replay_trace(trace, load_fabric("ideal"), ReplayOptions())
    noisy = replay_trace(trace, fabric, ReplayOptions())
    assert quiet.iteration_latency_us.max() == pytest.approx(quiet.iteration_latency_us.min())
    assert noisy.iteration_latency_us.max() > 2 * quiet.iteration_latency_us.max()
    assert noisy.total_time_ns > quiet.total_time_ns


def _fwq(detours: list[int], node: str = "n1", window: int = 1_000_000) -> str:
    header = (
        f"# fwq node={node} work_steps=100 clock_overhead_ns=20 quanta=50 quantum_ns=20000 "
        f"window_ns={window} threshold_ns=1000"
    )
    return "\n".join([header, *map(str, detours)]) + "\n"


def test_fwq_prints_the_excess_of_slow_quanta(tmp_path: Path) -> None:
    """fwq itself: the header's fastest quantum and window, each printed detour above the
    threshold, detours per second from the two."""
    from tailcast.agent.noise_profile import build_fwq

    out = subprocess.run(
        [str(build_fwq()), "20000", "0.3", "1000"], capture_output=True, text=True, check=True
    ).stdout
    p = parse_fwq_output(out, "fwq")
    assert p.quanta > 1000 and 0.25e9 < p.window_ns < 0.6e9
    assert p.quantum_ns * p.quanta <= p.window_ns
    assert all(d > 1000 for d in p.detours_ns)
    assert p.detours_per_s == pytest.approx(len(p.detours_ns) / (p.window_ns / 1e9))


def test_bad_fwq_output_names_the_line() -> None:
    with pytest.raises(InputError, match=r"out.txt:3: expected a detour"):
        parse_fwq_output(_fwq([20_000, "x"]), "out.txt")  # type: ignore[list-item]
    with pytest.raises(InputError, match="no '# fwq' header"):
        parse_fwq_output("20000\n", "out.txt")
    with pytest.raises(InputError, match=r"out.txt:1: the '# fwq' header lacks \['node'"):
        parse_fwq_output("# fwq quanta=1\n20000\n", "out.txt")


def test_cli_errors_are_one_line(results_home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    for args, said in (
        ([], "noise-profile runs inside a Slurm allocation (or give --local)"),
        (["--local", "--seconds", "300", "--quantum-us", "1"], "300,000,000 quanta; at most"),
    ):
        out = subprocess.run(
            [sys.executable, "-m", "tailcast", "agent", "noise-profile", *args],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert out.returncode == 2 and said in out.stderr
        assert out.stderr.count("tailcast: error:") == 1 and len(out.stderr.splitlines()) == 1


def test_runs_take_the_newest_profile_of_each_node(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    old = parse_fwq_output(_fwq([10_000], "node01", 50_000), "x")
    new = parse_fwq_output(_fwq([20_000], "node01"), "x")
    other = parse_fwq_output(_fwq([5_000], "node02", 45_000), "x")
    results.write("noise_profiles", profile_rows([old, other], "c", "7", t0))
    results.write("noise_profiles", profile_rows([new], "c", "8", t0 + timedelta(hours=1)))
    at = t0 + timedelta(hours=2)
    assert current_profiles(results, ["node01", "node02", "node03"], at) == {
        "node01": new.profile_id,
        "node02": other.profile_id,
    }
    assert current_profiles(results, ["node01"], t0 + timedelta(minutes=1)) == {
        "node01": old.profile_id
    }
    (tmp_path / "noise_profiles" / "damaged.parquet").write_bytes(b"PAR1 not parquet")
    problems: list[InputError] = []
    assert len(stored_profiles(results, problems)) == 3 and "damaged.parquet" in problems[0].path
    assert current_profiles(results, ["node01"], at) == {"node01": new.profile_id}
    pooled = tomllib.loads(host_noise_toml([old, other]))["host"]["noise"]
    assert pooled["work_ns"] == old.quanta * old.quantum_ns + other.quanta * other.quantum_ns > 0
    assert pooled["detours_ns"] == [10_000, 5_000]
