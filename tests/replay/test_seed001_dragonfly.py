"""Seed 001 (Salimi Beni & Cosenza, Bench 2022) in simulation on the bundled `marconi100`
Dragonfly+: 16 ranks, one per node, 1000 iterations of a 1 MiB MPI_Reduce (the paper's
§3.3 set-up), background jobs sized from b (§5.1) around the foreground.

What the paper reports and this reproduces:
- §5.3 / Fig. 5: with nodes on different islands, the mean and the tail grow with b
  (b = 0.2, 0.45, 0.7);
- §4.1 / Fig. 3: locality orders the latencies: same group < same island < different
  islands (here at b = 0.45, the paper's "most of the time" range 0.40 to 0.70, §6);

- §5.3 / Fig. 5c: the AlltoAll's mean grows ~1.6x from b = 0.21 to 0.74, when the AlltoAll
  is the pairwise exchange (one peer per step, each transfer at the full terminal rate).

What it does not reproduce (strict xfails below): the AlltoAll's growth with b under Open MPI
4.1.4's own schedule for it (linear_sync with no request limit: all 15 transfers at once,
each held to 1/15 of its terminal link, which background flows never share), and the
bimodality at b = 0.7. Nor does packet mode (test_seed001_packet.py,
bench/seed001_packet_bench.py): the hybrid's 1000-iteration AlltoAll p99 grows 1.02x from
b = 0.2 to 0.7 and its Reduce and AlltoAll at 0.7 are unimodal (dip p 0.80, 1.00); exact mode
slows everything (from the background's incast) but affords a few iterations only.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tailcast.analysis.bimodality import dip_test
from tailcast.replay.background_b import BackgroundB
from tailcast.replay.fabric import Fabric, bundled_fabrics, load_fabric, parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

RANKS, ITERATIONS, BYTES = 16, 1000, 1 << 20


def _trace(tmp_path_factory: pytest.TempPathFactory, collective: str) -> Path:
    table, meta = osu_trace(collective, RANKS, [BYTES], ITERATIONS)
    return write_trace(table, tmp_path_factory.mktemp("seed001") / f"{collective}.parquet", meta)


@pytest.fixture(scope="module")
def reduce_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _trace(tmp_path_factory, "reduce")


def _marconi(routing: str) -> Fabric:
    if routing == "adaptive":
        return load_fabric("marconi100")
    text = bundled_fabrics()["marconi100"].replace('routing = "adaptive"', f'routing = "{routing}"')
    return parse_fabric(text, f"<marconi100, {routing}>", name=f"marconi100-{routing}")


@cache
def _replay(trace: str, placement: str, b: float, coll: str = "") -> tuple[np.ndarray, float]:
    """Iteration latencies (us) and routes taken non-minimally (foreground + background)."""
    options = ReplayOptions(placement=placement, seed=3, coll=coll, background_b=BackgroundB(b=b))
    out = replay_trace(Path(trace), _marconi("adaptive"), options)
    assert len(out.iteration_latency_us) == ITERATIONS
    assert out.stats["background_messages"] > 0
    return np.asarray(out.iteration_latency_us), out.fabric_stats["routes_non_minimal"]


def _latencies(trace: str, placement: str, b: float, coll: str = "") -> np.ndarray:
    return _replay(trace, placement, b, coll)[0]


def _summary(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(np.percentile(x, 99))


def test_reduce_mean_and_p99_grow_with_b_across_islands(reduce_trace: Path) -> None:
    quiet = replay_trace(reduce_trace, _marconi("adaptive"), ReplayOptions(
        placement="different_islands", seed=3))  # fmt: skip
    # Fig. 3b: the Reduce across islands averages 1.4 ms on Marconi100 (runs under
    # whatever b they met; 1.17 ms on one group). The engine times Open MPI 4.1.4's default
    # for this case, the unsegmented binomial tree (derivation in
    # test_zero_load_reduce_is_open_mpi_4_1_4s_unsegmented_binomial): ~0.78 ms at zero load.
    # The paper's figure is not reproduced; this test keeps only the growth with b.
    assert 500 < quiet.iteration_latency_us.mean() < 1400
    means, p99s = [], []
    for b in (0.2, 0.45, 0.7):
        mean, p99 = _summary(_latencies(str(reduce_trace), "different_islands", b))
        means.append(mean)
        p99s.append(p99)
    assert means == sorted(means) and len(set(means)) == 3, means
    assert p99s == sorted(p99s) and len(set(p99s)) == 3, p99s
    # The tail grows faster than the mean: the p99 / mean ratio rises with b.
    ratios = [p / m for p, m in zip(p99s, means, strict=True)]
    assert ratios[-1] > ratios[0], ratios
    assert means[0] > float(quiet.iteration_latency_us.mean())


def test_zero_load_reduce_is_open_mpi_4_1_4s_unsegmented_binomial(reduce_trace: Path) -> None:
    """Open MPI 4.1.4's coll_tuned_decision_fixed.c, ompi_coll_tuned_reduce_intra_dec_fixed:
    communicator_size 16 falls in `< 32`, total_dsize 1 MiB >= 4096, so alg = 5 (binomial),
    passed to ompi_coll_tuned_reduce_intra_do_this with segsize 0, so
    COLL_BASE_COMPUTED_SEGCOUNT leaves segcount = count: one segment. The replay's default
    must be exactly the forced `reduce=binomial` (segsize 0), and not a segmented one.

    Derivation of the zero-load time on one leaf switch (no fabric contention): the in-order
    binomial tree of 16 ranks is 4 levels deep and every level on the critical path is one
    whole 1 MiB transfer on a 100 Gb/s terminal link (n/B = 83.89 us) followed by one
    reduction at gamma = 0.1 ns/B (104.86 us): 4 x 188.74 = 754.97 us, plus per-level
    overheads and latencies of a few us. Seed 001 measured 1.17 ms on one group (Fig. 3b)
    with IBM Spectrum MPI 10.4, whose reduce algorithm is not published: the model's host
    costs (marconi100.toml) are assumptions, not fitted to that figure."""
    fabric = _marconi("adaptive")

    def mean(coll: str) -> float:
        options = ReplayOptions(placement="same_group", seed=3, coll=coll)
        return float(replay_trace(reduce_trace, fabric, options).iteration_latency_us.mean())

    default = mean("")
    assert default == mean("reduce=binomial")
    assert default != mean("reduce=binomial:segsize=32K")
    n = float(BYTES)
    closed_form_us = 4 * (n / 12.5e3 + 0.1e-3 * n)
    assert closed_form_us == pytest.approx(754.97, abs=0.01)
    assert default == pytest.approx(closed_form_us, rel=0.03)


@pytest.fixture(scope="module")
def alltoall_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _trace(tmp_path_factory, "alltoall")


@pytest.mark.xfail(
    strict=True,
    reason="issue 12 not met under Open MPI 4.1.4's schedule: its 1 MiB AlltoAll for 16 ranks "
    "is linear_sync with no request limit, so each transfer is held to 1/15 of its own "
    "terminal link, which background jobs never share (1266.0 / 1266.2 us at b = 0.2 / 0.7)",
)
def test_alltoall_mean_grows_with_b_under_open_mpi_4_1_4s_schedule(alltoall_trace: Path) -> None:
    """ompi_coll_tuned_alltoall_intra_dec_fixed (4.1.4): communicator_size 16 falls in
    `< 32`, block_dsize 1 MiB >= 524288, so alg = 4 (linear_sync), and
    ompi_coll_tuned_alltoall_max_requests is 0 (no limit): every rank posts its 15 receives
    and 15 sends at once. In a max-min model a background flow on an inner link leaves such
    a 1/15-rate transfer its rate, so b does not reach it. InfiniBand's credit-based
    congestion spreading (head-of-line blocking behind a congested flow) would, and has no
    max-min counterpart here."""
    low = _latencies(str(alltoall_trace), "different_islands", 0.2).mean()
    high = _latencies(str(alltoall_trace), "different_islands", 0.7).mean()
    assert high > 1.3 * low, (low, high)


def test_pairwise_alltoall_mean_and_p99_grow_with_b_as_in_fig_5c(alltoall_trace: Path) -> None:
    """Seed 001 ran IBM Spectrum MPI 10.4, whose AlltoAll schedule is not published. Under
    the pairwise exchange (Open MPI's alg 2, `--coll alltoall=pairwise`: step i sends to
    rank + i and receives from rank - i, one transfer at the full terminal rate) every
    transfer that meets a background flow on an inner link loses half its rate, and the
    median shifts with b as §5.3 reports. Fig. 5c: the mean at b = 0.74 is ~1.6x the mean
    at 0.21; here 2062 -> 3482 us (1.69x) from b = 0.2 to 0.7."""
    runs = [
        _latencies(str(alltoall_trace), "different_islands", b, "alltoall=pairwise")
        for b in (0.2, 0.45, 0.7)
    ]
    means = [_summary(x)[0] for x in runs]
    p99s = [_summary(x)[1] for x in runs]
    medians = [float(np.median(x)) for x in runs]
    assert means == sorted(means) and len(set(means)) == 3, means
    assert p99s == sorted(p99s) and len(set(p99s)) == 3, p99s
    assert medians[-1] > 1.3 * medians[0], medians  # the peak itself moves (§5.3)
    assert 1.3 < means[-1] / means[0] < 2.0, means


def test_bcast_mean_and_p99_grow_with_b_and_stay_unimodal(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Fig. 5a: the 1 MiB Broadcast across islands slows with b (here 253, 308, 384 us
    mean); the paper reports no second mode for it, nor does the dip test here."""
    trace = str(_trace(tmp_path_factory, "bcast"))
    runs = [_latencies(trace, "different_islands", b) for b in (0.2, 0.45, 0.7)]
    means = [_summary(x)[0] for x in runs]
    p99s = [_summary(x)[1] for x in runs]
    assert means == sorted(means) and len(set(means)) == 3, means
    assert p99s == sorted(p99s) and len(set(p99s)) == 3, p99s
    assert means[-1] > 1.3 * means[0]
    assert all(dip_test(x)[1] > 0.05 for x in runs)


def test_reduce_locality_orders_same_group_island_different_islands(reduce_trace: Path) -> None:
    by_place = {
        p: _summary(_latencies(str(reduce_trace), p, 0.45))
        for p in ("same_group", "same_island", "different_islands")
    }
    means = [by_place[p][0] for p in ("same_group", "same_island", "different_islands")]
    p99s = [by_place[p][1] for p in ("same_group", "same_island", "different_islands")]
    # With 4.1.4's default reduce (the unsegmented binomial, see
    # test_zero_load_reduce_is_open_mpi_4_1_4s_unsegmented_binomial) the same-island and
    # different-islands means agree to 0.1 % (879.1 vs 878.6 us at b = 0.45): the order
    # holds for the p99, and the mean only separates the one-leaf placement from the others.
    assert means[0] < min(means[1], means[2]), by_place
    assert p99s[0] < p99s[1] < p99s[2], by_place
    # On one leaf switch nothing is shared with the background: no tail at all (§6:
    # "minimally affected by the global background traffic").
    group_mean, group_p99 = by_place["same_group"]
    assert group_p99 == pytest.approx(group_mean, rel=1e-3)
    assert by_place["same_island"][1] > 1.1 * group_p99


@pytest.mark.xfail(
    strict=True,
    reason="issue 12 not met since the engine runs Open MPI 4.1.4's reduce program "
    "(issue 22): the dip test no "
    "longer rejects unimodality at b = 0.7 (p = 0.23)",
)
def test_reduce_at_high_b_under_adaptive_routing_is_multimodal_by_the_dip_test(
    reduce_trace: Path,
) -> None:
    """§5.3: at high b the Reduce "becomes dual", which the seed ascribes to adaptive
    routing's non-minimal paths. In this model (1000 iterations, different islands, seed 3)
    the dip test gives, at b = 0.7: adaptive p = 0.23, minimal p = 0.035, Valiant p = 0.94;
    at b = 0.2 it rejects unimodality under all three (p < 0.001: a spike at the zero-load
    time for the iterations that meet no background flow, and a tail for those that do).
    The modes come from whether an iteration's transfers share a link with a background
    flow (max-min halves their rate), and adaptive routing spreads that out; a non-minimal
    path costs only its extra ~1 us of latency here, so it cannot make a mode of its own.
    The issue's second half (minimal routing unimodal) is reversed in this model."""
    x, detours = _replay(str(reduce_trace), "different_islands", 0.7)
    _, p = dip_test(x)
    assert p < 0.05, p
    assert detours > 0
