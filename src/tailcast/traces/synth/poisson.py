"""Seed 003's synthetic load (§4.3): every terminal generates messages as an independent
Poisson process, with constant or exponentially distributed lengths of mean l̄_o, to
destinations uniformly distributed over the other terminals, at a given message rate (seed
003 offers a load normalised to a Gemini's maximum optical throughput, Eq. 8: the rate of
replay/photonic_setups.py's `seed003_poisson_trace`).

Every terminal's process runs over the same horizon T = messages / λ, so each sends a
Poisson number of messages with mean `messages` (a fixed count per terminal would end the
terminals' arrivals at scattered times and bias whole-run throughput low: about 0.53 × load
with 10 messages on 32 terminals). As an MPI trace: each rank posts a receive for every
message it will get at start, then issues its sends as non-blocking calls separated by the
exponential inter-arrival gaps (compute gaps the replay honours), and finally waits for
everything. Sends never wait for
the network, so arrivals stay open-loop; replay with a fabric whose messages move as soon
as they are sent (`rendezvous = "none"`, or an eager threshold above the largest message).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from tailcast.errors import UsageError
from tailcast.traces.schema import Op, TraceBuilder

LENGTHS = ("constant", "exponential")


def poisson_rows(ranks: int, messages: int) -> int:
    """The rows `poisson_trace` writes on average (the message counts are Poisson with mean
    `messages` per rank): init, a receive and a send per message, waitall, finalize."""
    return max(ranks, 0) * (3 + 2 * max(messages, 0))


def poisson_trace(
    ranks: int,
    rate_per_ns: float,
    *,
    messages: int,
    mean_bytes: int,
    lengths: str = "exponential",
    seed: int = 0,
) -> pa.Table:
    """The trace of Poisson arrivals at `rate_per_ns` messages per ns on every rank,
    `messages` per rank on average."""
    if ranks < 2:
        raise UsageError("poisson needs 2 ranks or more")
    if not rate_per_ns > 0 or messages < 1 or mean_bytes < 1:
        raise UsageError("poisson needs a rate > 0, messages >= 1 and mean bytes >= 1")
    if lengths not in LENGTHS:
        raise UsageError(f"lengths must be one of {', '.join(LENGTHS)}, not {lengths!r}")
    rng = np.random.default_rng(seed)
    horizon = messages / rate_per_ns
    # Enough gaps that every row passes the horizon (P(Poisson(m) > m + 10√m + 20) ≈ 0).
    width = messages + int(10 * math.sqrt(messages)) + 20
    arrivals = np.cumsum(rng.exponential(1.0 / rate_per_ns, size=(ranks, width)), axis=1)
    counts = (arrivals < horizon).sum(axis=1)
    offsets = rng.integers(1, ranks, size=(ranks, width))
    dests = (np.arange(ranks)[:, None] + offsets) % ranks
    if lengths == "constant":
        sizes = np.full((ranks, width), mean_bytes, dtype=np.int64)
    else:
        sizes = np.maximum(1, np.rint(rng.exponential(mean_bytes, size=(ranks, width))))
        sizes = sizes.astype(np.int64)
    builder = TraceBuilder()
    # Sends in time order over all ranks: receives are posted in that order, which keeps
    # MPI's per-source ordering for the matches.
    sent = arrivals < horizon
    order = np.argsort(np.where(sent, arrivals, np.inf), axis=None, kind="stable")
    order = order[: int(counts.sum())]
    src_of, k_of = np.unravel_index(order, arrivals.shape)
    requests = [0] * ranks
    for r in range(ranks):
        builder.add(r, Op.INIT, comm=0, t_start_ns=0, t_end_ns=0)
    for src, k in zip(src_of.tolist(), k_of.tolist(), strict=True):
        dst = int(dests[src, k])
        builder.add(
            dst,
            Op.IRECV,
            comm=0,
            peer=src,
            tag=0,
            recv_bytes=int(sizes[src, k]),
            request=requests[dst],
            t_start_ns=0,
            t_end_ns=0,
        )
        requests[dst] += 1
    for r in range(ranks):
        for k in range(int(counts[r])):
            t = int(arrivals[r, k])
            builder.add(
                r,
                Op.ISEND,
                comm=0,
                peer=int(dests[r, k]),
                tag=0,
                send_bytes=int(sizes[r, k]),
                request=requests[r],
                t_start_ns=t,
                t_end_ns=t,
            )
            requests[r] += 1
        end = int(arrivals[r, counts[r] - 1]) if counts[r] else 0
        builder.add(
            r, Op.WAITALL, comm=0, requests=list(range(requests[r])), t_start_ns=end, t_end_ns=end
        )
        builder.add(r, Op.FINALIZE, comm=0, t_start_ns=end, t_end_ns=end)
    return builder.table()
