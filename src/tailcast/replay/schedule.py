"""`tailcast replay schedule`: one collective's per-rank program and its timing on a fabric.

The program is the engine's own (`_core.collective_program`: the point-to-point calls Open
MPI 4.1.4's coll/base function makes, in its order, with 4.1.4's algorithm choice or a forced
`KIND=ALG[:segsize=..]`). The timing comes from replaying a one-call trace (init, the
collective, finalize on every rank) on the fabric with per-message records: each isend /
irecv step is paired with its message (the k-th send from a to b is the k-th message a -> b,
MPI's non-overtaking order), so a reader sees when each transfer was posted and delivered.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tailcast import _core
from tailcast.errors import UsageError
from tailcast.replay.fabric import Fabric

# Collectives whose size is OSU's per-peer block (the others: the whole buffer).
PER_PEER = frozenset({"alltoall", "allgather", "gather", "scatter"})
ROOTED = frozenset({"bcast", "reduce", "gather", "scatter"})


@dataclass(frozen=True)
class Request:
    coll: str  # "bcast" or "bcast=pipeline:segsize=128K"
    ranks: int
    size_bytes: int
    root: int = 0
    dtype_bytes: int = 1


def _kind(coll: str) -> str:
    return coll.split("=", 1)[0].strip().lower()


def _one_call_trace(path: Path, req: Request) -> None:
    from tailcast.traces.io import TraceMeta, write_trace
    from tailcast.traces.schema import TraceBuilder

    kind = _kind(req.coll)
    builder = TraceBuilder()
    for rank in range(req.ranks):
        builder.add(rank, "init", comm=0, t_start_ns=0, t_end_ns=0)
        values: dict[str, Any] = {"comm": 0, "t_start_ns": 0, "t_end_ns": 0}
        values["send_bytes"] = req.size_bytes
        if kind in ROOTED:
            values["root"] = req.root
        if kind in PER_PEER:
            values["recv_bytes"] = req.size_bytes
        builder.add(rank, kind, **values)
        builder.add(rank, "finalize", comm=0, t_start_ns=0, t_end_ns=0)
    meta = TraceMeta(ranks=req.ranks, application=f"schedule {req.coll}", source_format="tailcast",
                     clock="synthetic")  # fmt: skip
    write_trace(builder.table(), path, meta)


def _timed(req: Request, fabric: Fabric) -> tuple[float, list[float], dict[str, Any]]:
    """Total time, each rank's exit from the collective (ns), and the message records."""
    from tailcast.replay.run import load_columns

    with tempfile.TemporaryDirectory(prefix="tailcast-schedule-") as tmp:
        trace = Path(tmp) / "one-call.parquet"
        _one_call_trace(trace, req)
        arrays = load_columns(trace).arrays()
    forced = req.coll if "=" in req.coll else ""
    scenario = _core.Scenario(
        fabric.spec, "linear", coll=forced, compute_scale=0.0, record_messages=True
    )
    result = _core.replay(scenario, [arrays])
    job = result.jobs[0]
    ends = [float(job.sim_end_ns[3 * r + 1]) for r in range(req.ranks)]
    messages = result.messages or {}
    return job.total_time_ns, ends, messages


def schedule(req: Request, fabric: Fabric) -> dict[str, Any]:
    """The per-rank program; each isend / irecv with its message's send (post) time and
    delivery time (µs). `algorithm` is the one selected; its program applies 4.1.4's own
    fallbacks (e.g. ring at count < p runs recursive doubling)."""
    if req.ranks < 1 or req.size_bytes < 0 or not 0 <= req.root < req.ranks:
        raise UsageError(f"need ranks >= 1, size >= 0 and 0 <= root < ranks, got {req}")
    try:
        algo, segsize, fanout, max_requests, radix, programs = _core.collective_program(
            req.coll, req.ranks, req.size_bytes, req.root, req.dtype_bytes
        )
    except ValueError as err:
        raise UsageError(f"--coll {req.coll!r}: {err}") from err
    total_ns, ends, msgs = _timed(req, fabric)
    # message rows per (src, dst), in send order
    pairs: dict[tuple[int, int], list[tuple[float, float]]] = {}
    if msgs:
        rows = sorted(
            zip(msgs["src_rank"].tolist(), msgs["send_seq"].tolist(), msgs["dst_rank"].tolist(),
                msgs["posted_ns"].tolist(), msgs["delivered_ns"].tolist(), strict=True),
            key=lambda m: (m[0], m[2], m[3], m[4]),
        )  # fmt: skip
        for src, _seq, dst, posted, delivered in rows:
            pairs.setdefault((int(src), int(dst)), []).append((float(posted), float(delivered)))
    ranks = []
    for me, steps in enumerate(programs):
        sent: dict[int, int] = {}
        got: dict[int, int] = {}
        out = []
        for call, peer, nbytes, reqs in steps:
            step: dict[str, Any] = {"call": call}
            if peer >= 0:
                step["peer"] = peer
            if nbytes or call in ("isend", "issend", "irecv", "reduce"):
                step["bytes"] = nbytes
            if reqs:
                step["requests"] = reqs
            if call in ("isend", "issend", "irecv"):
                counter, key = (sent, (me, peer)) if call != "irecv" else (got, (peer, me))
                k = counter.get(peer, 0)
                counter[peer] = k + 1
                found = pairs.get(key, [])
                if k < len(found):
                    step["sent_us"] = round(found[k][0] / 1000, 4)
                    step["delivered_us"] = round(found[k][1] / 1000, 4)
            out.append(step)
        ranks.append({"rank": me, "exit_us": round(ends[me] / 1000, 4), "steps": out})
    return {
        "collective": _kind(req.coll),
        "algorithm": re.sub(r"(?<!^)(?=[A-Z])", "_", algo).lower(),
        "forced": "=" in req.coll,
        "segsize_bytes": segsize,
        "fanout": fanout,
        "max_requests": max_requests,
        "radix": radix,
        "ranks": req.ranks,
        "size_bytes": req.size_bytes,
        "root": req.root,
        "dtype_bytes": req.dtype_bytes,
        "fabric": fabric.name,
        "total_us": round(total_ns / 1000, 4),
        "messages": sum(len(v) for v in pairs.values()),
        "per_rank": ranks,
    }


def describe_step(step: dict[str, Any]) -> str:
    call = str(step["call"])
    text: str = call
    if "peer" in step:
        text += f" {'<-' if call == 'irecv' else '->'} {step['peer']}"
    if "bytes" in step:
        text += f" {step['bytes']} B"
    if "requests" in step:
        text += f" [{','.join(str(r) for r in step['requests'])}]"
    if "sent_us" in step:
        text += f"   sent {step['sent_us']:.3f} us, delivered {step['delivered_us']:.3f} us"
    return text


def text_lines(doc: dict[str, Any]) -> list[str]:
    head = (
        f"{doc['collective']} {doc['algorithm']} ({'forced' if doc['forced'] else 'fixed rules'}"
        f", segsize {doc['segsize_bytes']} B, fanout {doc['fanout']}, max_requests "
        f"{doc['max_requests']}) at {doc['ranks']} ranks, {doc['size_bytes']} B on "
        f"{doc['fabric']}: {doc['total_us']:.3f} us, {doc['messages']} messages"
    )
    lines = [head]
    for rank in doc["per_rank"]:
        lines.append(f"rank {rank['rank']}: exits at {rank['exit_us']:.3f} us")
        lines += [f"  {i:>4}  {describe_step(s)}" for i, s in enumerate(rank["steps"])]
    return lines


def plot(doc: dict[str, Any], path: Path) -> None:
    """Space-time diagram: one row per rank, one line per message from (posted, sender) to
    (delivered, receiver), each rank's exit marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.35 * doc["ranks"] + 1.5))
    for rank in doc["per_rank"]:
        me = rank["rank"]
        for step in rank["steps"]:
            if step["call"] in ("isend", "issend") and "sent_us" in step:
                xs = [step["sent_us"], step["delivered_us"]]
                ax.plot(xs, [me, step["peer"]], color="tab:blue", linewidth=0.8)
        ax.plot([rank["exit_us"]], [me], marker="|", color="tab:red", markersize=10)
    ax.set_xlabel("simulated time (us)")
    ax.set_ylabel("rank")
    ax.set_yticks(range(doc["ranks"]))
    ax.invert_yaxis()
    ax.set_title(text_lines(doc)[0], fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
