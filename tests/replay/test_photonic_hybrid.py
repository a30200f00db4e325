"""Seed 004's hybrid network through the whole replay path (issue 14): messages at or above
the 8 KiB rendezvous threshold take photonic circuits, smaller ones the electrical torus;
a hot spot makes circuit setups time out and back off, and every message still arrives
exactly once with nothing left reserved."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from tailcast.replay.fabric import FabricConfigError, bundled_fabrics, load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.synth.program import Program

FABRIC = "photonic-hybrid-butterfly"
SIZES = (1, 4096, 8191, 8192, 8193, 65536, 1 << 20)


def _write(p: Program, path: Path, name: str) -> Path:
    write_trace(p.table(), path, TraceMeta(ranks=p.ranks, application=name))
    return path


def _exchange(tmp_path: Path, ranks: int, pairs: list[tuple[int, int, int]]) -> Path:
    """Every (src, dst, bytes) as an isend / irecv pair, then a waitall on every rank."""
    p = Program(ranks)
    reqs: list[list[int]] = [[] for _ in range(ranks)]
    for tag, (src, dst, size) in enumerate(pairs):
        reqs[dst].append(p.irecv(dst, src, size, tag=tag))
    for tag, (src, dst, size) in enumerate(pairs):
        reqs[src].append(p.isend(src, dst, size, tag=tag))
    for r in range(ranks):
        p.waitall(r, reqs[r])
    return _write(p, tmp_path / "exchange.parquet", "hybrid-exchange")


def _check_invariants(stats: dict[str, float]) -> None:
    # Nothing lost or duplicated, nothing left reserved.
    assert stats["chip_links_held"] == 0 and stats["circuits_open"] == 0, stats
    assert stats["circuits_delivered"] == stats["circuit_messages"], stats
    assert stats["circuits_established"] == stats["circuit_messages"], stats
    assert stats["circuit_setups"] == stats["circuit_messages"] + stats["circuit_timeouts"]


def test_messages_straddling_the_threshold_split_between_circuits_and_torus(
    tmp_path: Path,
) -> None:
    ranks = 64
    pairs = [(r, (r + 1 + i * 9) % ranks, s) for r in range(ranks) for i, s in enumerate(SIZES)]
    trace = _exchange(tmp_path, ranks, pairs)
    out = replay_trace(trace, load_fabric(FABRIC), ReplayOptions())
    msgs = out.messages
    assert msgs is not None and msgs.num_rows == len(pairs)
    big = pc.greater_equal(msgs.column("bytes"), 8192)
    path = msgs.column("path")
    assert pc.all(pc.equal(path, pc.if_else(big, "circuit", "packet"))).as_py()
    # Circuit messages record their setup (at least the SETUP / PATH-ACK round trip of a
    # 6-link path at 232 ns a hop); packet ones none.
    setup = pc.filter(msgs.column("setup_ns"), big)
    assert pc.min(setup).as_py() >= 2 * 6 * 232.0
    assert pc.max(pc.filter(msgs.column("setup_ns"), pc.invert(big))).as_py() == 0.0
    s = out.fabric_stats
    assert s["circuit_messages"] == 4 * ranks and s["packet_messages"] == 3 * ranks
    _check_invariants(s)


def test_a_hot_spot_times_setups_out_and_delivers_every_message_once(tmp_path: Path) -> None:
    ranks = 48
    pairs = [(r, 0, 1 << 20) for r in range(1, ranks)] + [(r, 0, 64) for r in range(1, ranks)]
    trace = _exchange(tmp_path, ranks, pairs)
    out = replay_trace(trace, load_fabric(FABRIC), ReplayOptions())
    s = out.fabric_stats
    assert s["circuit_timeouts"] > 0
    _check_invariants(s)
    msgs = out.messages
    assert msgs is not None and msgs.num_rows == len(pairs)
    keys = {
        (r["src_rank"], r["send_seq"]) for r in msgs.select(["src_rank", "send_seq"]).to_pylist()
    }
    assert len(keys) == len(pairs)
    big = pc.equal(msgs.column("path"), "circuit")
    assert pc.sum(pc.filter(msgs.column("blocked"), big)).as_py() > 0
    # 47 x 1 MiB serialise on rank 0's chip port at 71 x 10 Gb/s.
    assert out.total_time_ns >= 47 * (1 << 20) / (71 * 10 / 8)


def test_a_wrong_key_is_named(tmp_path: Path) -> None:
    text = bundled_fabrics()[FABRIC].replace("wavelengths = 71", "wavelengths = 0")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(FabricConfigError, match=r"wavelengths"):
        load_fabric(bad)


@pytest.mark.parametrize(
    "source",
    ["otf2/sst-macro-10rank/traces.otf2", "dumpi/testbgp.meta", "dumpi/testtrace.meta"],
)
def test_public_traces_replay_on_the_hybrid_fabric(
    shared_data: Path, tmp_path: Path, source: str
) -> None:
    from tailcast.traces.convert import convert

    parquet = tmp_path / "trace.parquet"
    convert(shared_data / "traces" / source, parquet)
    out = replay_trace(parquet, load_fabric(FABRIC), ReplayOptions())
    assert out.stats["actions"] == out.ops.num_rows and out.total_time_ns > 0
    _check_invariants(out.fabric_stats)


def test_the_bundled_captured_trace_replays_on_the_hybrid_fabric() -> None:
    from tailcast.quickstart import bundled_dir

    trace = bundled_dir() / "halo-4rank.parquet"
    out = replay_trace(trace, load_fabric(FABRIC), ReplayOptions())
    assert out.total_time_ns > 0
    _check_invariants(out.fabric_stats)
    assert out.messages is not None
    big = pc.greater_equal(out.messages.column("bytes"), 8192)
    assert pc.all(
        pc.equal(out.messages.column("path"), pc.if_else(big, "circuit", "packet"))
    ).as_py()


ELECTRICAL_ONLY = """
model = "flow"
link_bandwidth_gbps = 10.0
hop_latency_ns = 34.0
overhead_ns = 300.0
gamma_ns_per_byte = 0.05
[topology]
kind = "torus3d"
dims = [10, 10, 10]
"""


def test_without_large_messages_the_hybrid_is_its_electrical_torus(
    shared_data: Path, tmp_path: Path
) -> None:
    """The seed's baseline is the electrical network alone: a trace with no message of
    8 KiB or more (DUMPI testtrace) replays to the same time on both."""
    from tailcast.traces.convert import convert

    parquet = tmp_path / "trace.parquet"
    convert(shared_data / "traces" / "dumpi/testtrace.meta", parquet)
    electrical = tmp_path / "electrical.toml"
    electrical.write_text(ELECTRICAL_ONLY)
    hybrid = replay_trace(parquet, load_fabric(FABRIC), ReplayOptions())
    alone = replay_trace(parquet, load_fabric(electrical), ReplayOptions())
    assert hybrid.fabric_stats["circuit_messages"] == 0
    assert hybrid.total_time_ns == alone.total_time_ns
