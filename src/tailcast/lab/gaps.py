"""The pause a lab background job takes after each call, drawn the same way by the job on
the lab (`tailcast.lab.background`) and by the trace that stands for it in a replay
(`tailcast.lab.bgtrace` via `tailcast.lab.compare`).

"fixed" sleeps the same time after every call. Two such jobs sharing a link keep whatever
phase they start with in a fluid model (each burst stretches by exactly what the other
takes from it), so a replay's result then hangs on the start offsets it draws, while on the
lab the phases drift: the same run replayed with 8 offsets gave a cross-island reduce median
between 550 and 989 ms. "exponential" draws each pause from an exponential distribution of
the given mean: the jobs' phases then mix within one run, on the lab and in the replay alike,
and it does not matter where in its sequence a job was when a measurement started.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

GAP_KINDS = ("fixed", "exponential")


def gap_draws(kind: str, mean: float, seed: int | str) -> Iterator[float]:
    """Endless pauses of `kind` with mean `mean` (any time unit; the draws are in it)."""
    if kind not in GAP_KINDS:
        raise ValueError(f"gap kind {kind!r}: expected one of {GAP_KINDS}")
    if kind == "fixed" or mean <= 0:
        return itertools.repeat(max(mean, 0.0))
    rng = random.Random(seed)
    return (rng.expovariate(1.0 / mean) for _ in itertools.count())
