"""Seed 002's synthetic traffic (§V): every node sends 100 messages to random destinations,
80 % short (4 KB) and 20 % long (512 KB). Sources are independent: each rank posts all its
receives, issues all its sends, then waits for everything."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tailcast.errors import UsageError
from tailcast.traces.synth.program import Program

SHORT_BYTES = 4 * 1024
LONG_BYTES = 512 * 1024
SHORT_FRACTION = 0.8
MESSAGES_PER_NODE = 100


def mix_rows(ranks: int, messages: int = MESSAGES_PER_NODE) -> int:
    """The rows `seed002_mix_trace` writes: init, a receive and a send per message, a
    waitall, finalize per rank (traces.synth.budget)."""
    return max(ranks, 0) * (3 + 2 * max(messages, 0))


def seed002_mix_trace(
    ranks: int,
    messages: int = MESSAGES_PER_NODE,
    seed: int = 0,
    short_bytes: int = SHORT_BYTES,
    long_bytes: int = LONG_BYTES,
    short_fraction: float = SHORT_FRACTION,
) -> pa.Table:
    if ranks < 2 or messages < 1 or not 0.0 <= short_fraction <= 1.0:
        raise UsageError("need ranks >= 2, messages >= 1 and 0 <= short fraction <= 1")
    rng = np.random.default_rng(seed)
    flows: list[tuple[int, int, int]] = []
    for src in range(ranks):
        dsts = rng.integers(0, ranks - 1, size=messages)
        dsts = dsts + (dsts >= src)  # uniform over the other ranks
        short = rng.random(messages) < short_fraction
        flows += [
            (src, int(d), short_bytes if s else long_bytes)
            for d, s in zip(dsts, short, strict=True)
        ]
    p = Program(ranks)
    reqs: dict[int, list[int]] = {r: [] for r in range(ranks)}
    for src, dst, size in flows:
        reqs[dst].append(p.irecv(dst, src, size))
    for src, dst, size in flows:
        reqs[src].append(p.isend(src, dst, size))
    for r in range(ranks):
        p.waitall(r, reqs[r])
    return p.table()
