"""Every Open MPI 4.1 collective algorithm beside SimGrid 3.32's port of it (issue 22).

For 7 collectives x each coll/tuned algorithm x 8 B / 64 KiB / 1 MiB at p = 16, one trace
per pair (init, the collective, finalize on every rank) is replayed by
- tailcast: `--coll KIND=ALG[:segsize=..:fanout=..]` on the flow crossbar of
  bench/simgrid_bench.py (100 Gb/s full-duplex links, 100 ns per link, no host costs), and
- SimGrid: `smpirun -replay` of the same trace exported as TiT, on the same platform and
  settings as bench/simgrid_bench.py, with `smpi/<kind>:<port>` naming the function that
  SimGrid's own Open MPI selector (src/smpi/colls/smpi_openmpi_selector.cpp, the `funcs[]`
  table of each `<kind>__ompi`) runs for that Open MPI algorithm id.

Where a SimGrid port fixes its own segment size or fanout, tailcast is given the same (the
`tailcast_coll` field), so the pair compares one program; collectives_pairs.py holds the
table and, for each pair that is off by more than 5 %, the reason read in both sources.

SimGrid's "Simulation time" line has whole-microsecond resolution; the time is read from
the log line's timestamp printed with nanosecond precision (`%.9d`) instead.

Run alone: .venv/bin/python bench/collectives_bench.py [KIND ...]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from collectives_pairs import PAIRS, SIZES, Pair, reason_for
from simgrid_bench import (
    EAGER_BYTES,
    LINK_GBPS,
    LINK_LATENCY_NS,
    SIMGRID_BASE_CFG,
    SMPIREPLAYMAIN,
    fabric_toml,
    simgrid_platform,
)

RANKS = 16
TOLERANCE = 0.05
SIMGRID_CFG = [
    *SIMGRID_BASE_CFG,
    "--log=smpi_replay.fmt:T=%.9d|%m%n",
    "--log=smpi_coll.thres:warning",
    "--log=smpi_config.thres:warning",
    "--log=xbt_cfg.thres:warning",
]
NO_SMALL_MAILBOX = ("--cfg=smpi/async-small-thresh:0",)
EAGER_8192 = (
    f"--cfg=smpi/async-small-thresh:{EAGER_BYTES + 1}",
    f"--cfg=smpi/send-is-detached-thresh:{EAGER_BYTES + 1}",
)
ENVELOPE_BYTES = 16
ENVELOPE_GAP_US = 0.1
SIM_TIME = re.compile(r"T=([0-9.]+)\|Simulation time")


def write_trace(path: Path, kind: str, size: int) -> None:
    """init, one `kind` of `size` bytes (OSU's convention: per-peer block for
    alltoall/allgather/gather/scatter, the whole buffer otherwise), finalize."""
    from tailcast.traces.io import TraceMeta, write_trace
    from tailcast.traces.schema import TraceBuilder

    builder = TraceBuilder()
    per_peer = kind in ("alltoall", "allgather", "gather", "scatter")
    for rank in range(RANKS):
        builder.add(rank, "init", comm=0, t_start_ns=0, t_end_ns=0)
        values: dict[str, Any] = {"comm": 0, "t_start_ns": 0, "t_end_ns": 0, "send_bytes": size}
        if kind in ("bcast", "reduce", "gather", "scatter"):
            values["root"] = 0
        if per_peer:
            values["recv_bytes"] = size
        builder.add(rank, kind, **values)
        builder.add(rank, "finalize", comm=0, t_start_ns=0, t_end_ns=0)
    meta = TraceMeta(ranks=RANKS, application=f"{kind} {size} B", source_format="tailcast",
                     clock="synthetic")  # fmt: skip
    write_trace(builder.table(), path, meta)


def tailcast_time_us(trace: Path, coll: str, handshake: bool = True) -> float:
    from tailcast import _core
    from tailcast.replay.fabric import parse_fabric
    from tailcast.replay.run import load_columns

    fabric = parse_fabric(fabric_toml(RANKS, handshake), "<collectives bench crossbar>")
    arrays = load_columns(trace).arrays()
    scenario = _core.Scenario(fabric.spec, "linear", coll=coll, compute_scale=0.0,
                              eager_threshold_bytes=EAGER_BYTES)  # fmt: skip
    result = _core.replay(scenario, [arrays])
    return result.jobs[0].total_time_ns / 1000.0


def simgrid_time_us(
    trace: Path, work: Path, kind: str, port: str, cfg: tuple[str, ...] = ()
) -> tuple[float | None, str]:
    """SimGrid's simulated time, or None and the tail of its output when it fails."""
    from tailcast.traces.io import read_trace
    from tailcast.traces.tit_export import export_tit

    table, meta = read_trace(trace)
    listing = work / "trace.tit"
    export_tit(table, meta, listing)
    platform, hostfile = simgrid_platform(work, RANKS)
    argv = ["smpirun", "-no-privatize", "-replay", str(listing), "-np", str(RANKS)]
    argv += ["-platform", str(platform), "-hostfile", str(hostfile), SMPIREPLAYMAIN]
    argv += [*SIMGRID_CFG, f"--cfg=smpi/{kind}:{port}", *cfg]
    try:
        run = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, "timed out after 300 s"
    found = SIM_TIME.search(run.stdout + run.stderr)
    if run.returncode != 0 or not found:
        tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
        return None, f"exit {run.returncode}: " + " | ".join(tail)
    return float(found.group(1)) * 1e6, ""


def diagnose(pair: Pair, size: int, work: Path, tc: float, sg: float | None) -> dict[str, float]:
    """Re-runs of a pair that is off, each removing one known difference between the two
    simulators; a re-run that lands within 5 % of the other side names the reason."""
    trace = work / "trace.parquet"
    coll = pair.tailcast_coll(size)
    out: dict[str, float] = {}
    if sg is None:
        # SimGrid's eager path (messages < async-small-thresh go to the receiver's small-
        # message mailbox, smpi_request.cpp) off: does the failure depend on it?
        fixed, _ = simgrid_time_us(trace, work, pair.kind, pair.simgrid, NO_SMALL_MAILBOX)
        if fixed is not None:
            out["simgrid_without_eager_mailbox_us"] = round(fixed, 4)
        return out
    if size > EAGER_BYTES:
        # rendezvous without the RTS/CTS exchange, as SimGrid's SMPI moves it
        out["tailcast_no_handshake_us"] = round(tailcast_time_us(trace, coll, False), 4)
    if size >= EAGER_BYTES:
        # SimGrid with messages of exactly 8192 B eager, as tailcast's `<=` rule makes them
        eager, _ = simgrid_time_us(trace, work, pair.kind, pair.simgrid, EAGER_8192)
        if eager is not None:
            out["simgrid_8192_eager_us"] = round(eager, 4)
    if size < EAGER_BYTES:
        # SimGrid adds a 16-byte MPI envelope to every message (smpi_request.cpp,
        # `payload_size_ = size_ + 16`); tailcast moves the payload alone
        plus = work / "envelope"
        plus.mkdir(exist_ok=True)
        write_trace(plus / "trace.parquet", pair.kind, size + ENVELOPE_BYTES)
        out["tailcast_plus_envelope_us"] = round(tailcast_time_us(plus / "trace.parquet", coll), 4)
    return out


def diagnosed_reason(diag: dict[str, float], tc: float, sg: float | None) -> str:
    def near(a: float, b: float) -> bool:
        return abs(a / b - 1) <= TOLERANCE

    if sg is None:
        fixed = diag.get("simgrid_without_eager_mailbox_us")
        if fixed is not None and near(tc, fixed):
            return (
                f"SimGrid fails only with its eager path on: with smpi/async-small-thresh:0 it "
                f"runs and gives {fixed:.3f} us (ratio {tc / fixed:.4f})"
            )
        return ""
    texts = []
    no_handshake = diag.get("tailcast_no_handshake_us")
    sg_eager = diag.get("simgrid_8192_eager_us")
    if no_handshake is not None and tc > sg and near(no_handshake, sg):
        gap = (tc - sg) * 1000
        texts.append(
            f"rendezvous handshake: tailcast sends messages > {EAGER_BYTES} B after an RTS/CTS "
            f"exchange (2 control messages, {4 * LINK_LATENCY_NS:g} ns per rendezvous message on "
            f"this crossbar), SimGrid starts a matched transfer at once; tailcast's flow fabric "
            f"with rendezvous_handshake = false gives {diag['tailcast_no_handshake_us']:.3f} us "
            f"(ratio {diag['tailcast_no_handshake_us'] / sg:.4f}); the gap {gap:.0f} ns is "
            f"{gap / (4 * LINK_LATENCY_NS):.1f} handshakes on the critical path"
        )
    if sg_eager is not None and near(tc, sg_eager):
        texts.append(
            f"eager boundary: {EAGER_BYTES}-B messages are eager in tailcast (size <= limit, "
            f"as ob1's eager limit) and not in SimGrid (size < smpi/async-small-thresh, "
            f"smpi_request.cpp); SimGrid with 8193 as threshold gives "
            f"{diag['simgrid_8192_eager_us']:.3f} us (ratio "
            f"{tc / diag['simgrid_8192_eager_us']:.4f})"
        )
    if (
        not texts
        and no_handshake is not None
        and sg_eager is not None
        and near(no_handshake, sg_eager)
    ):
        texts.append(
            f"rendezvous handshake and eager boundary together: tailcast without the RTS/CTS "
            f"exchange gives {no_handshake:.3f} us and SimGrid with 8192-B messages eager gives "
            f"{sg_eager:.3f} us (ratio {no_handshake / sg_eager:.4f})"
        )
    # an envelope costs 1.28 ns a link: only gaps of tens of ns are envelopes
    small_gap = 0 < sg - tc < ENVELOPE_GAP_US
    if small_gap and near(diag.get("tailcast_plus_envelope_us", 0.0), sg):
        texts.append(
            f"SimGrid's 16-byte MPI envelope (smpi_request.cpp `payload_size_ = size_ + 16`): "
            f"tailcast with {ENVELOPE_BYTES} B more per message gives "
            f"{diag['tailcast_plus_envelope_us']:.4f} us (ratio "
            f"{diag['tailcast_plus_envelope_us'] / sg:.4f}); the gap is {(sg - tc) * 1000:.1f} ns"
        )
    return "; ".join(texts)


def compare(pair: Pair, size: int, work: Path) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    trace = work / "trace.parquet"
    write_trace(trace, pair.kind, size)
    coll = pair.tailcast_coll(size)
    tc = tailcast_time_us(trace, coll)
    sg, failure = simgrid_time_us(trace, work, pair.kind, pair.simgrid)
    row: dict[str, Any] = {
        "collective": pair.kind,
        "algorithm": pair.algorithm,
        "ompi_id": pair.ompi_id,
        "bytes": size,
        "tailcast_coll": coll,
        "simgrid_port": f"smpi/{pair.kind}:{pair.simgrid}",
        "tailcast_us": round(tc, 4),
        "simgrid_us": None if sg is None else round(sg, 4),
        "ratio": None if sg is None else round(tc / sg, 4),
    }
    within = sg is not None and abs(tc / sg - 1) <= TOLERANCE
    row["within_5pct"] = within
    if not within:
        if failure:
            row["simgrid_failure"] = failure
        diag = diagnose(pair, size, work, tc, sg)
        row["diagnostics"] = diag
        row["reason"] = "; ".join(
            t for t in (reason_for(pair, size), diagnosed_reason(diag, tc, sg)) if t
        )
    return row


def run(kinds: list[str] | None = None) -> dict[str, Any]:
    if shutil.which("smpirun") is None:
        return {"skipped": "smpirun not found (Debian package libsimgrid-dev)"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="tailcast-collectives-bench-") as tmp:
        for i, pair in enumerate(p for p in PAIRS if not kinds or p.kind in kinds):
            for size in SIZES:
                row = compare(pair, size, Path(tmp) / f"{i}-{size}")
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
    within = sum(1 for r in rows if r["within_5pct"])
    failed = sum(1 for r in rows if r["simgrid_us"] is None)
    unexplained = [f"{r['collective']} {r['algorithm']} {r['bytes']} B" for r in rows
                   if not r["within_5pct"] and not r.get("reason")]  # fmt: skip
    return {
        "simgrid": "3.32 smpireplaymain",
        "simgrid_cfg": SIMGRID_CFG,
        "ranks": RANKS,
        "fabric": f"crossbar, {LINK_GBPS:g} Gb/s full-duplex links, {LINK_LATENCY_NS:g} ns/link",
        "eager_bytes": EAGER_BYTES,
        "tolerance": TOLERANCE,
        "pairs": len(rows),
        "within_5pct": within,
        "off_by_more_than_20pct": sum(
            1 for r in rows if r["ratio"] is not None and abs(r["ratio"] - 1) > 0.2
        ),
        "simgrid_failures": failed,
        "unexplained": unexplained,
        "rows": rows,
    }


def main() -> None:
    print(json.dumps(run(sys.argv[1:] or None), indent=2))


if __name__ == "__main__":
    main()
