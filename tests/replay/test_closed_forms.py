"""End-to-end check of the α-β-γ model against Thakur, Rabenseifner & Gropp (IJHPCA 19(1),
2005): OSU-pattern traces replayed on `alpha_beta` with forced algorithms match the closed forms
within 1 % (issue 5, "Done when"). The closed forms are contention-free: `ports = 0` (the model's
default, one port per endpoint, is checked in crates/replay-engine/tests/closed_forms.rs)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tailcast.replay.fabric import parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tests.replay.conftest import osu_parquet

ALPHA, BETA, GAMMA = 1000.0, 1.0, 0.5  # ns, ns/B, ns/B
P = 16
LG = math.log2(P)
FABRIC = parse_fabric(
    f"model = 'alpha_beta'\nalpha_us = {ALPHA / 1000}\nbeta_ns_per_byte = {BETA}\n"
    f"gamma_ns_per_byte = {GAMMA}\nports = 0\n",
    "<test>",
)


def recursive_doubling(n: int) -> float:
    return LG * (ALPHA + n * BETA + n * GAMMA)


def expected(collective: str, algo: str, n: int) -> float:
    """n = OSU size: whole buffer (bcast, allreduce), per-peer block (allgather, alltoall)."""
    frac = (P - 1) / P
    if collective == "bcast":
        return LG * (ALPHA + n * BETA)
    if collective == "allreduce":
        # Open MPI 4.1.4 falls back when count < p: allreduce_intra_ring to recursive
        # doubling, allreduce_intra_redscat_allgather (count < pof2) to basic_linear, a
        # linear reduce to rank 0 (the last rank's vector lands in the result, p-1 more
        # reductions) and a linear bcast.
        if algo == "rabenseifner" and n < P:
            return 2 * (ALPHA + n * BETA) + (P - 1) * n * GAMMA
        if algo == "recursive_doubling" or n < P:
            return recursive_doubling(n)
        if algo == "ring":
            return 2 * (P - 1) * ALPHA + 2 * frac * n * BETA + frac * n * GAMMA
        return 2 * LG * ALPHA + 2 * frac * n * BETA + frac * n * GAMMA  # Rabenseifner
    if collective == "allgather":
        return (P - 1) * (ALPHA + n * BETA)  # ring
    if algo == "pairwise":
        return (P - 1) * (ALPHA + n * BETA)
    return LG * (ALPHA + (P / 2) * n * BETA)  # Bruck


CASES = [
    ("bcast", "binomial"),
    ("allreduce", "ring"),
    ("allreduce", "recursive_doubling"),
    ("allreduce", "rabenseifner"),
    ("allgather", "ring"),
    ("alltoall", "pairwise"),
    ("alltoall", "bruck"),
]


@pytest.mark.parametrize("size", [8, 1 << 20])
@pytest.mark.parametrize(("collective", "algo"), CASES)
def test_alpha_beta_gamma_matches_thakur(
    tmp_path: Path, collective: str, algo: str, size: int
) -> None:
    trace = osu_parquet(tmp_path, collective, P, size)
    options = ReplayOptions(coll=f"{collective}={algo}", compute_scale=0.0)
    outcome = replay_trace(trace, FABRIC, options)
    assert len(outcome.iterations) == 1
    got_ns = float(outcome.iteration_latency_us[0]) * 1000.0
    want_ns = expected(collective, algo, size)
    assert got_ns == pytest.approx(want_ns, rel=0.01), (collective, algo, size, got_ns, want_ns)
