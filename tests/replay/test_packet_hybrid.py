"""Hybrid packet mode (`[packet] background = "virtual"`, issue 39): the traces' packets are
explicit, the synthetic background jobs are virtual queues per port
(crates/replay-engine/src/fabric/packet/virtual_queues.rs). Real replays of bundled fabrics
against the exact mode (`background = "explicit"`, every packet simulated)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from tailcast.replay.background import BackgroundJob
from tailcast.replay.fabric import Fabric, bundled_fabrics, parse_fabric
from tailcast.replay.run import ReplayOptions, ReplayOutcome, replay_trace

from .conftest import osu_parquet

ENDPOINTS = {"dfp-test": 80, "tree-2x2x4": 16}


def _packet(name: str, background: str) -> Fabric:
    text = bundled_fabrics()[name]
    head, sep, tables = text.partition("\n[")
    text = f'{head}\ncontention = "packet"\n{sep}{tables}\n[packet]\nbackground = "{background}"\n'
    return parse_fabric(text, f"<{name}, {background}>", name=f"{name}-{background}")


def _run(
    trace: Path, name: str, background: str, load: float, seed: int = 1
) -> tuple[ReplayOutcome, float]:
    """The replay with a uniform background job on every endpoint the trace leaves free,
    and its CPU seconds."""
    ranks = 4
    job = BackgroundJob(pattern="uniform", nodes=ENDPOINTS[name] - ranks, load=load)
    options = ReplayOptions(
        placement="different_islands", seed=seed, background=(job,), record_messages=True
    )
    start = time.process_time()
    out = replay_trace(trace, _packet(name, background), options)
    return out, time.process_time() - start


def _latencies(out: ReplayOutcome) -> np.ndarray:
    assert out.messages is not None
    m = out.messages.filter(pc.greater(out.messages.column("bytes"), 0))
    took = m.column("delivered_ns").to_numpy() - m.column("posted_ns").to_numpy()
    return np.asarray(took, dtype=float)


@pytest.fixture(scope="module")
def alltoall(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return osu_parquet(tmp_path_factory.mktemp("hybrid"), "alltoall", 4, 1 << 16, iterations=10)


def test_hybrid_without_background_load_is_the_exact_mode(alltoall: Path) -> None:
    exact, _ = _run(alltoall, "dfp-test", "explicit", 0.0)
    hybrid, _ = _run(alltoall, "dfp-test", "virtual", 0.0)
    assert np.array_equal(exact.ops.column("sim_end_ns"), hybrid.ops.column("sim_end_ns"))
    assert hybrid.fabric_stats["virtual_ports"] == 0


def test_hybrid_reports_messages_and_sends_no_background_packet(alltoall: Path) -> None:
    out, _ = _run(alltoall, "dfp-test", "virtual", 0.5)
    assert out.stats["background_messages"] == 0
    fs = out.fabric_stats
    assert fs["virtual_ports"] > 0 and fs["virtual_trains"] > 0 and fs["virtual_wait_ns"] > 0
    # dfp-test at 0.5 overloads its global links: the trains that wait for one fill their
    # input queues, and foreground packets wait behind them.
    assert fs["virtual_hol_ns"] > 0
    # Only the foreground's packets cross the network: 10 x 12 messages of 64 packets.
    assert fs["packets"] == 10 * 12 * 64
    assert out.messages is not None
    rows = out.messages.filter(pc.greater(out.messages.column("bytes"), 0)).to_pylist()
    assert all(r["hops"] >= 2 for r in rows)
    assert any(r["wait_ns"] > 0 for r in rows)
    assert {r["path"] for r in rows} <= {"minimal", "non_minimal"}


def test_hybrid_foreground_slows_with_background_load(alltoall: Path) -> None:
    runs = {load: _run(alltoall, "dfp-test", "virtual", load)[0] for load in (0.0, 0.2, 0.5, 0.8)}
    p50s = [float(np.median(_latencies(runs[load]))) for load in (0.0, 0.2, 0.5, 0.8)]
    assert p50s == sorted(p50s) and len(set(p50s)) == 4, p50s


def test_hybrid_is_deterministic_for_a_seed(alltoall: Path) -> None:
    a, _ = _run(alltoall, "tree-2x2x4", "virtual", 0.5, seed=4)
    b, _ = _run(alltoall, "tree-2x2x4", "virtual", 0.5, seed=4)
    c, _ = _run(alltoall, "tree-2x2x4", "virtual", 0.5, seed=5)
    assert np.array_equal(_latencies(a), _latencies(b))
    assert not np.array_equal(_latencies(a), _latencies(c))


@pytest.fixture(scope="module")
def alltoall_20(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return osu_parquet(tmp_path_factory.mktemp("hybrid20"), "alltoall", 4, 1 << 16, iterations=20)


@pytest.mark.xfail(
    strict=True,
    reason="issue 39's hybrid bar (p50 and p99 within 10 % of exact) is not met. hybrid/exact "
    "at 0.2/0.5/0.8: dfp-test p50 1.02/1.12/1.18, p99 1.17/1.21/1.17; tree-2x2x4 (8 seeds "
    "pooled) p50 0.76/0.96/1.19, p99 0.39/0.75/0.94. The exact tree collapses (background "
    "delivered 0.21/0.19/0.10 of injection at offered 0.23/0.53/0.83: tree saturation "
    "behind 64 KiB trains), the virtual queues carry the max-min load (0.5 and 0.8 not "
    "capped) and see only the next and the ejection port's congestion",
)
def test_hybrid_p50_and_p99_within_10_percent_of_exact(alltoall: Path, alltoall_20: Path) -> None:
    """dfp-test from one seed (its exact p50 varies 157-174 us over seeds 1-3); tree-2x2x4
    pooled over 8 seeds: one seed's exact p50 ranges 30-54 us (seeds 1-3, 10 or 80
    iterations), as the placement decides which of the foreground's queues the collapsed
    background jams, so one seed cannot judge a 10 % bar."""
    runs = {"dfp-test": (alltoall, (1,)), "tree-2x2x4": (alltoall_20, tuple(range(1, 9)))}
    ratios = {}
    for name, (trace, seeds) in runs.items():
        for load in (0.2, 0.5, 0.8):
            exact, hybrid = (
                np.concatenate([_latencies(_run(trace, name, mode, load, s)[0]) for s in seeds])
                for mode in ("explicit", "virtual")
            )
            ratios[name, load] = tuple(
                float(np.percentile(hybrid, q) / np.percentile(exact, q)) for q in (50, 99)
            )
    assert all(0.9 <= r <= 1.1 for pair in ratios.values() for r in pair), ratios


def test_hybrid_takes_five_times_less_cpu_than_exact_at_high_load(tmp_path: Path) -> None:
    """A 2-rank exchange among 78 busy nodes: the exact mode simulates every background
    packet while the foreground runs, the hybrid only the foreground's, the train arrivals
    at the ports it reads (in proportion to simulated time) and, once, the background's
    routes and max-min rates (~10 ms here, so short replays gain less). Issue 39 asks 10x;
    measured 5.1-5.5x at 20 iterations (0.24 / 0.044-0.047 CPU-s) and 6.5-9.4x at 60
    (0.76 / 0.081-0.117 CPU-s on a shared 2-core host), so the bar is not met yet."""
    trace = osu_parquet(tmp_path, "alltoall", 2, 1 << 16, iterations=60)
    job = BackgroundJob(pattern="uniform", nodes=78, load=0.8)

    def cpu(background: str) -> float:
        options = ReplayOptions(placement="different_islands", seed=1, background=(job,))
        start = time.process_time()
        replay_trace(trace, _packet("dfp-test", background), options)
        return time.process_time() - start

    exact, hybrid = cpu("explicit"), cpu("virtual")
    assert exact >= 5 * hybrid, (exact, hybrid)
