"""Packet contention (`contention = "packet"`, issue 39) through real replays of the bundled
fabric files: a single message takes the flow model's (and CODES') time; an incast queues,
and the per-message queueing delay, credit stalls and buffer occupancy reach
replay_messages and fabric_stats; a bad [packet] table is one clear error."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from tailcast.replay.fabric import Fabric, FabricConfigError, bundled_fabrics, parse_fabric
from tailcast.replay.run import ReplayOptions, ReplayOutcome, replay_trace
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import Op, TraceBuilder


def _packet(name: str, extra: str = "", routing: str | None = None) -> Fabric:
    """A bundled fabric under packet contention (the keys go before its first table)."""
    text = bundled_fabrics()[name]
    if routing is not None:
        text = text.replace('routing = "adaptive"', f'routing = "{routing}"')
    head, sep, tables = text.partition("\n[")
    text = f'{head}\ncontention = "packet"\n{extra}\n{sep}{tables}'
    return parse_fabric(text, f"<{name}, packet>", name=f"{name}-packet")


def _flow(name: str, routing: str | None = None) -> Fabric:
    text = bundled_fabrics()[name]
    if routing is not None:
        text = text.replace('routing = "adaptive"', f'routing = "{routing}"')
    return parse_fabric(text, f"<{name}>", name=name)


def _incast(tmp: Path, ranks: int, nbytes: int) -> Path:
    """Ranks 1..n-1 each send `nbytes` to rank 0 at once."""
    b = TraceBuilder()
    for rank in range(ranks):
        b.add(rank, Op.INIT, t_start_ns=0, t_end_ns=0)
    for src in range(1, ranks):
        b.add(src, Op.SEND, peer=0, send_bytes=nbytes, tag=src, comm=0, t_start_ns=0, t_end_ns=1)
        b.add(0, Op.RECV, peer=src, recv_bytes=nbytes, tag=src, comm=0, t_start_ns=0, t_end_ns=1)
    for rank in range(ranks):
        b.add(rank, Op.FINALIZE, t_start_ns=2, t_end_ns=2)
    return write_trace(b.table(), tmp / f"incast_{ranks}_{nbytes}.parquet", TraceMeta(ranks=ranks))


def _replay(tmp: Path, fabric: Fabric, trace: Path, placement: list[int]) -> ReplayOutcome:
    where = tmp / "placement.txt"
    where.write_text("".join(f"{e}\n" for e in placement))
    return replay_trace(trace, fabric, ReplayOptions(placement=str(where), record_messages=True))


def _took(out: ReplayOutcome) -> list[float]:
    assert out.messages is not None
    rows = out.messages.filter(pc.greater(out.messages.column("bytes"), 0)).to_pylist()
    return [int(r["delivered_ns"]) - int(r["posted_ns"]) for r in rows]


@pytest.mark.parametrize(
    ("routing", "dst", "path", "codes_ns"),
    [("adaptive", 48, "minimal", 1637.5), ("valiant", 48, "non_minimal", 2936.6)],
)
def test_one_packet_takes_the_flow_models_and_codes_time_on_dfp_test(
    tmp_path: Path, routing: str, dst: int, path: str, codes_ns: float
) -> None:
    trace = _incast(tmp_path, 2, 1024)  # rank 1 -> rank 0: one 1024-B chunk
    flow = _took(_replay(tmp_path, _flow("dfp-test", routing), trace, [dst, 0]))
    out = _replay(tmp_path, _packet("dfp-test", routing=routing), trace, [dst, 0])
    assert _took(out) == flow
    assert flow[0] == pytest.approx(codes_ns, rel=0.02)
    assert out.messages is not None
    row = out.messages.filter(pc.greater(out.messages.column("bytes"), 0)).to_pylist()[0]
    assert row["path"] == path
    assert row["wait_ns"] == pytest.approx(0.0, abs=1.0)


def test_an_incast_queues_in_packet_mode_and_reports_it(tmp_path: Path) -> None:
    # 15 senders, 8 KiB each (eager: all leave at once), into one endpoint of the 16-port
    # fat tree: its down link serialises 120 KiB in both models, but only packets queue,
    # in buffers behind it.
    trace = _incast(tmp_path, 16, 8 << 10)
    placement = list(range(16))
    flow = _replay(tmp_path, _flow("fat-tree-16"), trace, placement)
    pkt = _replay(tmp_path, _packet("fat-tree-16"), trace, placement)
    # Same bytes through the same bottleneck: the last deliveries agree up to the latency
    # of the two links a near sender (same switch) saves over a far one (flows all drain
    # together, so a far one is last; the last packet may be a near sender's).
    link_ns = 15 * (8 << 10) / 12.5
    assert max(_took(flow)) >= link_ns
    assert abs(max(_took(pkt)) - max(_took(flow))) <= 2 * 100.0
    assert pkt.messages is not None
    waits = sorted(pkt.messages.column("wait_ns").to_pylist())
    # Served one after another, the k-th waits for ~k messages' serialisation.
    assert waits[-1] > 0.8 * link_ns, waits
    assert sum(1 for w in waits if w > 1000.0) >= 12, waits
    stats = pkt.fabric_stats
    assert stats["credit_stalls"] > 0
    # 8 packets of 1 KiB each: ranks 1-3 share rank 0's switch (2 links), 4-15 cross the
    # second level (4 links).
    assert stats["packet_hops"] == 3 * 8 * 2 + 12 * 8 * 4
    assert stats["buffer_occupancy_link_max_pct"] == 100.0


def test_a_packet_table_that_cannot_hold_a_packet_is_one_clear_error() -> None:
    with pytest.raises(FabricConfigError, match=r"packet\.buffer_bytes.*at least one packet"):
        _packet("fat-tree-16", "[packet]\npacket_bytes = 4096\nbuffer_bytes = 1024\n")
