"""The bundled Dragonfly+ fabrics against CODES' dragonfly-plus model (codes-org/codes,
src/networks/model-net/dragonfly-plus.cxx and the configurations under
src/network-workloads/conf/dragonfly-plus/): topology counts, hops per path class and the
zero-load latency of one chunk, each through a real replay of the bundled TOML."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest

from tailcast.replay.fabric import Fabric, bundled_fabrics, load_fabric, parse_fabric
from tailcast.replay.run import ReplayOutcome, replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.schema import Op, TraceBuilder

GIB = float(1 << 30)
CHUNK = 1024  # dfp-test.conf: packet_size = chunk_size = 1024


def _one_message(tmp: Path, nbytes: int) -> Path:
    """Rank 0 sends `nbytes` to rank 1 (eager below 8 KiB)."""
    b = TraceBuilder()
    for rank in (0, 1):
        b.add(rank, Op.INIT, t_start_ns=0, t_end_ns=0)
    b.add(0, Op.SEND, peer=1, send_bytes=nbytes, tag=7, comm=0, t_start_ns=0, t_end_ns=1)
    b.add(1, Op.RECV, peer=0, recv_bytes=nbytes, tag=7, comm=0, t_start_ns=0, t_end_ns=1)
    for rank in (0, 1):
        b.add(rank, Op.FINALIZE, t_start_ns=2, t_end_ns=2)
    return write_trace(b.table(), tmp / f"one_{nbytes}.parquet", TraceMeta(ranks=2))


def _replay(tmp: Path, fabric: Fabric, src: int, dst: int, nbytes: int) -> ReplayOutcome:
    placement = tmp / f"place_{src}_{dst}.txt"
    placement.write_text(f"{src}\n{dst}\n")
    opts = ReplayOptions(placement=str(placement), record_messages=True)
    return replay_trace(_one_message(tmp, nbytes), fabric, opts)


def _data_message(out: ReplayOutcome) -> dict[str, object]:
    assert out.messages is not None
    rows = out.messages.filter(pc.greater(out.messages.column("bytes"), 0)).to_pylist()
    assert len(rows) == 1
    return rows[0]


def _variant(name: str, routing: str) -> Fabric:
    text = bundled_fabrics()[name].replace('routing = "adaptive"', f'routing = "{routing}"')
    assert f'routing = "{routing}"' in text
    return parse_fabric(text, f"<{name} with {routing} routing>", name=f"{name}-{routing}")


@pytest.mark.parametrize(
    (
        "name",
        "groups",
        "leaves",
        "endpoints",
        "routers",
        "cables",
        "per_pair",
        "paths_inside",
        "paths_between",
    ),
    [
        # dfp-test.conf: 5 repetitions of (16 terminals, 8 routers); its dfp-test-inter file
        # holds 80 directed spine-to-spine links, 4 for every ordered pair of groups; a
        # leaf reaches a leaf of its group through any of 4 spines, of another group
        # through any of the 4 cables between the groups.
        ("dfp-test", 5, 20, 80, 40, 40, 4, 4, 4),
        # dfp_8k.conf: 1056 repetitions of (8 terminals, 1 router); dfp_8k_inter: 8448
        # directed links, 8 per ordered group pair (spine x reaches the 16 groups of block
        # x mod 2); 16 spines inside a group, 8 cables between two groups.
        ("dfp-8k", 33, 528, 8448, 1056, 4224, 8, 16, 8),
    ],
)
def test_topology_counts_equal_codes(
    tmp_path: Path,
    name: str,
    groups: int,
    leaves: int,
    endpoints: int,
    routers: int,
    cables: int,
    per_pair: int,
    paths_inside: int,
    paths_between: int,
) -> None:
    fabric = load_fabric(name)
    assert fabric.endpoints == endpoints
    stats = _replay(tmp_path, fabric, 0, 1, CHUNK).fabric_stats
    assert stats["topology_endpoints"] == endpoints
    assert stats["topology_routers"] == routers
    assert stats["topology_global_cables"] == cables
    assert stats["topology_cables_per_group_pair"] == per_pair
    assert stats["topology_minimal_paths_same_group"] == paths_inside
    assert stats["topology_minimal_paths_other_group"] == paths_between
    # Seed 001's islands are the Dragonfly+ groups, its groups the leaf switches.
    layout = fabric.layout
    assert (len(set(layout["island"])), len(set(layout["group"]))) == (groups, leaves)
    assert layout["path_classes"] == ["minimal", "non_minimal"]


def _codes_chunk_ns(gib_per_s: float) -> float:
    """CODES' bytes_to_ns(chunk_size, bandwidth in GiB/s)."""
    return CHUNK / (gib_per_s * GIB) * 1e9


def test_zero_load_chunk_latency_per_path_class_matches_codes_timing(tmp_path: Path) -> None:
    """One 1024-byte chunk on an idle dfp-test, per CODES' timing conventions:

    - the source terminal serializes the chunk on its link (`packet_send`: cn_delay =
      bytes_to_ns(chunk_size, cn_bandwidth));
    - every router crossed delays it by router_delay (100 ns, CODES' default: dfp-test.conf
      sets none) plus the chunk's serialization on the link it leaves by
      (`router_packet_send`: local_delay, global_delay or cn_delay);
    - CODES adds only sub-nanosecond ROSS lookahead and random jitter per event (< 1 ns
      each, ~10 events: < 0.7 % here), and models no cable latency.

    With t = 8 GiB/s, l = 5.25 GiB/s, g = 1.5 GiB/s chunk times (119.2, 181.7, 635.8 ns):
      same leaf     host, leaf                                 2t + 1·100          =  338.4 ns
      same group    host, leaf, spine, leaf                    2t + 2l + 3·100     =  901.7 ns
      minimal       host, leaf, spine, spine, leaf             2t + 2l + g + 4·100 = 1637.5 ns
      non-minimal   … + intermediate spine, leaf, spine        2t + 4l + 2g + 7·100 = 2936.6 ns
    """
    term, loc, glob = _codes_chunk_ns(8.0), _codes_chunk_ns(5.25), _codes_chunk_ns(1.5)
    adaptive, valiant = load_fabric("dfp-test"), _variant("dfp-test", "valiant")
    cases = [
        (adaptive, 0, 1, 2, "minimal", 2 * term + 100),
        (adaptive, 0, 5, 4, "minimal", 2 * term + 2 * loc + 300),
        (adaptive, 0, 48, 5, "minimal", 2 * term + 2 * loc + glob + 400),
        (valiant, 0, 48, 8, "non_minimal", 2 * term + 4 * loc + 2 * glob + 700),
    ]
    for fabric, src, dst, hops, path, codes_ns in cases:
        m = _data_message(_replay(tmp_path, fabric, src, dst, CHUNK))
        took = int(m["delivered_ns"]) - int(m["posted_ns"])  # type: ignore[call-overload]
        assert took == pytest.approx(codes_ns, rel=0.02), (fabric.name, src, dst)
        assert (m["hops"], m["path"]) == (hops, path)


def test_messages_report_their_path_class_in_replay_ops(tmp_path: Path) -> None:
    out = _replay(tmp_path, _variant("dfp-test", "valiant"), 0, 48, 1 << 20)
    sends = out.ops.filter(pc.equal(out.ops.column("op"), "send")).to_pylist()
    assert [(r["path"], r["hops"]) for r in sends] == [("non_minimal", 8)]
    # The same pair under minimal routing: 5 links; 1 MiB pipelines behind the first chunk,
    # after a rendezvous handshake whose RTS and CTS each take the 4 router delays.
    out = _replay(tmp_path, _variant("dfp-test", "minimal"), 0, 48, 1 << 20)
    m = _data_message(out)
    term, loc, glob = _codes_chunk_ns(8.0), _codes_chunk_ns(5.25), _codes_chunk_ns(1.5)
    first_chunk = 2 * term + 2 * loc + glob + 400
    took = int(m["delivered_ns"]) - int(m["posted_ns"])  # type: ignore[call-overload]
    assert took == pytest.approx(2 * 400 + first_chunk + 1023 * glob, rel=1e-6)
