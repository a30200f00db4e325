"""Host noise (`[host.noise]`, crates/replay-engine/src/fabric/host/noise.rs) and the
iteration statistic the agent stores (per iteration the max and the mean over ranks of each
rank's own interval of the timed call), on real OSU-pattern traces through the real engine
and CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from tailcast.replay.fabric import BUNDLED_DIR, parse_fabric
from tailcast.replay.run import ReplayOptions, replay_trace
from tailcast.replay.stream import stream_replay
from tests.cli.running import one_error, run
from tests.replay.conftest import osu_parquet

IDEAL = (BUNDLED_DIR / "ideal.toml").read_text()

# A fixed-work-quantum profile as the agent writes one: 100 detours of 5-20 µs seen in
# 0.1 s of undisturbed work (1000 detours/s, mean 12.4 µs: a rank is away 1.2 % of the
# time, so most iterations of a few µs meet no detour and a few percent do).
PROFILE = """
[host.noise]
kind = "empirical"
work_ns = 1.0e8
detours_ns = [{}]
""".format(", ".join(str(5000.0 + 150.0 * i) for i in range(100)))


@pytest.fixture(scope="module")
def allreduce(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """OSU allreduce, 8 ranks, 8 B, 1000 timed iterations."""
    return osu_parquet(tmp_path_factory.mktemp("osu"), "allreduce", 8, 8, iterations=1000)


def latencies(trace: Path, toml: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    out = replay_trace(trace, parse_fabric(toml, "<test>"), ReplayOptions(seed=seed))
    return np.asarray(out.iteration_latency_us), np.asarray(out.iteration_mean_us)


def test_an_empirical_noise_profile_gives_an_osu_allreduce_a_tail(allreduce: Path) -> None:
    quiet, quiet_mean = latencies(allreduce, IDEAL)
    # A point mass on a quiet host (up to the rounding of span = end - start at ms times).
    assert np.percentile(quiet, 99) == pytest.approx(np.percentile(quiet, 50), rel=1e-9)
    noisy, noisy_mean = latencies(allreduce, IDEAL + PROFILE)
    p50, p99 = np.percentile(noisy, [50, 99])
    # The iterations that meet a detour wait it out (>= 5 µs; p50 is a few µs). (p50 itself
    # may move: after one rank was held up, the barrier lets the ranks leave it with another
    # stable skew, here 6.0 instead of 3.0 µs; a noise-free compute gap does the same.)
    assert p99 / p50 > 2.0
    assert noisy.min() >= quiet.min()  # detours only delay
    # The mean over ranks never exceeds the max, and noise moves it less than the max.
    assert (noisy_mean <= noisy + 1e-9).all() and (quiet_mean <= quiet + 1e-9).all()
    assert (noisy_mean - quiet_mean).mean() < (noisy - quiet).mean()


def test_noise_is_deterministic_for_a_seed(allreduce: Path) -> None:
    a, _ = latencies(allreduce, IDEAL + PROFILE, seed=5)
    b, _ = latencies(allreduce, IDEAL + PROFILE, seed=5)
    c, _ = latencies(allreduce, IDEAL + PROFILE, seed=6)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != c.tobytes()


@pytest.mark.parametrize("chunk_rows", [3, 4096])
def test_noisy_replays_stream_as_they_replay_in_memory(allreduce: Path, chunk_rows: int) -> None:
    """Detours depend on each rank's simulated instants only, not on how rows are fed."""
    fabric, options = parse_fabric(IDEAL + PROFILE, "<test>"), ReplayOptions(seed=3)
    batch = replay_trace(allreduce, fabric, options)
    streamed = stream_replay(allreduce, fabric, options, chunk_rows=chunk_rows, keep_ops=False)
    assert streamed.total_time_ns == batch.total_time_ns
    assert streamed.iteration_latency_us == list(batch.iteration_latency_us)
    assert streamed.iteration_mean_us == list(batch.iteration_mean_us)


def test_kind_none_replays_as_without_noise(allreduce: Path) -> None:
    plain = latencies(allreduce, IDEAL)
    none = latencies(allreduce, IDEAL + '\n[host.noise]\nkind = "none"\n')
    assert plain[0].tobytes() == none[0].tobytes()
    assert plain[1].tobytes() == none[1].tobytes()


def test_stored_iterations_carry_max_and_mean(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "reduce", 4, 4096, iterations=5)
    home = tmp_path / "home"
    done = run(home, "replay", "run", trace, "--fabric", "ideal")
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(next((home / "replay_iterations").glob("*.parquet"))).to_pylist()
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3, 4]
    # A reduce's non-root ranks leave before the root has combined everything: the mean
    # of the ranks' own intervals is below the longest one.
    assert all(0 < r["latency_us_mean"] < r["latency_us"] for r in rows)


@pytest.mark.parametrize(
    ("noise", "key", "words"),
    [
        ('kind = "poisson"\nlength_ns = 1000.0', "host.noise.rate_per_s", "is required"),
        ('kind = "gaussian"', "host.noise.kind", "none, empirical, poisson"),
        ('kind = "empirical"\nwork_ns = 1e9\ndetours_ns = []', "host.noise.detours_ns",
         "at least 1"),
        ('kind = "poisson"\nrate_per_s = 10\nlength_ns = 5\nlength = "pareto"',
         "host.noise.length", "constant, exponential, lognormal"),
    ],
)  # fmt: skip
def test_a_bad_noise_table_is_one_error_naming_file_and_key(
    tmp_path: Path, noise: str, key: str, words: str
) -> None:
    fabric = tmp_path / "noisy.toml"
    fabric.write_text(f"{IDEAL}\n[host.noise]\n{noise}\n")
    trace = osu_parquet(tmp_path, "allreduce", 4, 8)
    line = one_error(run(tmp_path / "home", "replay", "run", trace, "--fabric", fabric), 2)
    assert str(fabric) in line and key in line and words in line, line
    assert not (tmp_path / "home" / "replay_iterations").exists()
