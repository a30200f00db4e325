"""How lab background jobs pause between calls (tailcast.lab.gaps), on the lab and in the
replay: exponential pauses keep a job's ranks in step and free the replay of the start
phases a fixed pause locks in."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import numpy as np
import pytest

from tailcast.lab.compare import LabReplayer, lab_runs
from tailcast.lab.gaps import gap_draws
from tailcast.replay.fabric import load_fabric
from tailcast.store import Catalog, ResultsDir


def test_fixed_pauses_are_the_mean() -> None:
    assert list(islice(gap_draws("fixed", 0.3, 1), 4)) == [0.3] * 4


def test_exponential_pauses_repeat_per_seed_and_have_the_mean() -> None:
    # every rank of a job draws from the job's seed: they pause alike
    a = list(islice(gap_draws("exponential", 0.3, 7), 20000))
    assert a == list(islice(gap_draws("exponential", 0.3, 7), 20000))
    assert a != list(islice(gap_draws("exponential", 0.3, 8), 20000))
    x = np.asarray(a)
    assert x.mean() == pytest.approx(0.3, rel=0.03)
    assert x.std() / x.mean() == pytest.approx(1.0, rel=0.05)  # exponential: cv = 1
    assert list(islice(gap_draws("exponential", 0.0, 7), 2)) == [0.0, 0.0]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="poisson"):
        next(gap_draws("poisson", 0.3, 1))


@pytest.mark.slow
def test_exponential_pauses_free_the_replay_of_its_start_phases(
    bundled_store: ResultsDir, tmp_path: Path
) -> None:
    """The cross-island reduce beside two background jobs, replayed with 4 seeds (start
    offsets and pauses): with fixed pauses the median moves by tens of percent with the
    offsets; with exponential pauses the jobs' phases mix within the run."""
    with Catalog(bundled_store) as cat:
        runs = lab_runs(cat, None, [1 << 20])
    wanted = ("cross-8", "different_islands", "reduce")
    run = next(r for r in runs if (r["phase"], r["placement"], r["benchmark"]) == wanted)
    fabric = load_fabric("lab")

    def medians(kind: str) -> np.ndarray:
        out = []
        for seed in range(4):
            replayer = LabReplayer(fabric, bundled_store, tmp_path / f"{kind}{seed}", seed=seed)
            out.append(np.median(replayer.replay_run(run | {"bg_gaps": kind})[1]))
        return np.asarray(out)

    fixed, exponential = medians("fixed"), medians("exponential")
    spread = lambda m: (m.max() - m.min()) / m.mean()  # noqa: E731
    assert spread(fixed) > 0.3, fixed
    assert spread(exponential) < 0.15, exponential
