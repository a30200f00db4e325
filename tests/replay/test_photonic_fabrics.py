"""The photonic fabrics end to end: the bundled captured trace on both, with every message's
circuit setup, admission wait and blocked attempts in `replay_ops`; seed 003's Poisson
load from `tailcast trace synth poisson` on the Gemini model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.errors import UsageError
from tailcast.quickstart import bundled_dir
from tailcast.replay.fabric import load_fabric
from tailcast.replay.photonic_setups import (
    GeminiPoint,
    gemini_link,
    seed003_options,
    seed003_poisson_trace,
)
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import Catalog, ResultsDir
from tailcast.traces.io import read_meta, read_trace


@pytest.mark.parametrize("fabric", ["benes-psf-16", "gemini-16"])
def test_the_captured_halo_trace_reports_every_messages_setup_wait_and_blocking(
    tmp_path: Path, fabric: str
) -> None:
    results = ResultsDir(tmp_path / "store")
    outcome = replay_trace(
        bundled_dir() / "halo-4rank.parquet", load_fabric(fabric), ReplayOptions(), results
    )
    with Catalog(results) as cat:
        # halo.py exchanges with MPI_Sendrecv (one message per call) and reduces.
        rows = cat.rows(
            "SELECT op, setup_ns, wait_ns, blocked, hops, path FROM replay_ops "
            f"WHERE replay_id = '{outcome.replay_id}' AND op = 'sendrecv'"
        )
        recorded = cat.rows(
            "SELECT count(*) AS n FROM replay_ops "
            f"WHERE replay_id = '{outcome.replay_id}' AND setup_ns IS NOT NULL"
        )[0]["n"]
        messages = cat.rows(
            "SELECT count(*) AS n, sum(setup_ns) AS setup FROM replay_messages "
            f"WHERE replay_id = '{outcome.replay_id}'"
        )[0]
        replay = cat.rows(
            f"SELECT application FROM replays WHERE replay_id = '{outcome.replay_id}'"
        )
    assert len(rows) == 1600 and recorded > len(rows)  # the allreduces' messages too
    assert all(r["setup_ns"] is not None and r["blocked"] is not None for r in rows)
    assert all(r["wait_ns"] >= 0 and r["hops"] > 0 for r in rows)
    # Every message paid for a circuit: reconfiguration (PSF) or a setup round trip (Gemini).
    assert all(r["setup_ns"] > 0 for r in rows), rows[:3]
    assert messages["n"] == outcome.stats["messages"] and messages["setup"] > 0
    assert {r["path"] for r in rows} <= {"rack", "uplink", "optical", "electrical", "mixed"}
    assert replay[0]["application"] == read_meta(bundled_dir() / "halo-4rank.parquet").application


def test_trace_synth_poisson_writes_seed_003s_load(tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    args = [
        "trace",
        "synth",
        "poisson",
        "-o",
        str(out),
        "--ranks",
        "8",
        "--messages",
        "20",
        "--load",
        "0.4",
        "--lengths",
        "constant",
        "--fabric",
        "gemini-16",
        "--seed",
        "3",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    table, meta = read_trace(out)
    assert meta.application == "seed003-poisson"
    assert (meta.extra["load"], meta.extra["lengths"], meta.extra["mean_bytes"]) == (
        "0.4",
        "constant",
        str(1 << 20),
    )
    sends = table.filter(table.column("op").to_numpy(zero_copy_only=False) == "isend")
    # A Poisson count over one horizon for all ranks: mean 8 · 20, standard deviation 12.6.
    assert abs(sends.num_rows - 8 * 20) < 5 * 12.6, sends.num_rows
    assert set(sends.column("send_bytes").to_pylist()) == {1 << 20}
    # Arrivals: 20 per rank at λ = 0.4 · η · BW_o / l̄ (Eq. 8 per terminal, N = 16).
    link = gemini_link(load_fabric("gemini-16"))
    rate = link.message_rate_per_ns(0.4, 1 << 20)
    ranks, starts = sends.column("rank").to_pylist(), sends.column("t_start_ns").to_pylist()
    last = [max(t for r, t in zip(ranks, starts, strict=True) if r == k) for k in range(8)]
    assert 0.5 * 20 / rate < sum(last) / len(last) < 1.5 * 20 / rate
    bad = CliRunner().invoke(
        app, ["trace", "synth", "poisson", "-o", str(out), "--fabric", "crossbar"]
    )
    assert isinstance(bad.exception, UsageError) and "banyan_circuit" in str(bad.exception)


def _throughput(tmp_path: Path, protocol: str, load: float) -> dict[str, float]:
    point = GeminiPoint(8, protocol)
    table = seed003_poisson_trace(
        8,
        gemini_link(point.fabric()),
        load=load,
        messages=60,
        mean_bytes=1 << 20,
        lengths="exponential",
        seed=1,
    )
    from tailcast.traces.io import TraceMeta, write_trace

    trace = write_trace(table, tmp_path / f"{protocol}-{load}.parquet", TraceMeta(ranks=8))
    return replay_trace(trace, point.fabric(), seed003_options(1)).fabric_stats


def test_gemini_carries_light_load_and_basic_saturates_before_voq(tmp_path: Path) -> None:
    light = {p: _throughput(tmp_path, p, 0.3) for p in ("basic", "voq")}
    for p, s in light.items():
        assert s["throughput_normalised"] == pytest.approx(0.3, rel=0.2), (p, s)
        # Control signals cross the uncongested electrical network in about Eq. 3's time.
        assert s["control_delay_mean_ns"] < 1.5 * s["control_delay_min_ns"], (p, s)
    # Overloaded, the run ends draining a backlog (fewer non-empty VOQs): the whole-run
    # throughput understates VOQ's saturation point (0.86 at N = 8 in the engine's test).
    heavy = {p: _throughput(tmp_path, p, 1.2) for p in ("basic", "voq")}
    assert heavy["basic"]["throughput_normalised"] < 0.6, heavy
    assert heavy["voq"]["throughput_normalised"] > 1.2 * heavy["basic"]["throughput_normalised"]
    assert heavy["basic"]["optical_delay_mean_ns"] > heavy["voq"]["optical_delay_mean_ns"]
    assert json.dumps(heavy)  # plain floats


def test_poisson_needs_a_gemini_fabric() -> None:
    with pytest.raises(UsageError, match="banyan_circuit"):
        gemini_link(load_fabric("crossbar"))
