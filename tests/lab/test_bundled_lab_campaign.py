"""Issue 18's acceptance on the campaign bundled with the quickstart, which
scripts/record_quickstart_data.py recorded on the real network lab
(slurm_jobs/lab-quickstart.toml): latency grows with b only where the background shares links
with the measurement, and every 1 MiB run replayed on the calibrated `lab` fabric is compared
and listed, misses included, and all 24 are within the issue's tolerances (at the replay's default
seed: see "The network lab" in DESIGN.md for how the figures move with it)."""

from __future__ import annotations

import pytest

from tailcast.lab.compare import LabReplayer, RunComparison, compare_runs
from tailcast.lab.compare_report import comparison_markdown
from tailcast.lab.tails import phase_tails
from tailcast.replay.fabric import load_fabric
from tailcast.store import Catalog, ResultsDir

MIB = 1 << 20


def test_alltoall_p99_grows_with_shared_background_only(bundled_store: ResultsDir) -> None:
    with Catalog(bundled_store) as cat:
        tails = phase_tails(cat)
    one = {
        t.phase: t
        for t in tails
        if (t.placement, t.benchmark, t.msg_size_bytes) == ("different_islands", "alltoall", MIB)
    }
    assert set(one) == {"none", "cross-4", "cross-8", "local-8"}
    assert one["none"].b == 0.0
    # b = 0.5 on links the measurement uses: the island link and both groups' uplinks
    assert one["cross-8"].b == pytest.approx(0.5) and one["cross-8"].shares_links
    assert one["cross-8"].p99_ratio is not None and one["cross-8"].p99_ratio >= 2.0, one
    # the same b = 0.5, inside groups 2 and 4: no link in common with the measurement
    assert one["local-8"].b == pytest.approx(0.5) and not one["local-8"].shares_links
    assert one["local-8"].p99_ratio is not None and abs(one["local-8"].p99_ratio - 1) < 0.20
    # b = 0.25 sits between
    assert one["cross-4"].p99_ratio is not None and one["cross-4"].p99_ratio > 1.2


@pytest.fixture(scope="module")
def comparisons(
    bundled_store: ResultsDir, tmp_path_factory: pytest.TempPathFactory
) -> list[RunComparison]:
    replayer = LabReplayer(load_fabric("lab"), bundled_store, tmp_path_factory.mktemp("traces"))
    return compare_runs(replayer, sizes=[MIB])


@pytest.mark.slow
def test_every_1mib_run_is_compared_and_listed(comparisons: list[RunComparison]) -> None:
    rows = comparisons
    # 3 collectives x 2 placements x 4 phases of slurm_jobs/lab-quickstart.toml
    assert len(rows) == 24
    assert all(r.n_simulated == r.n_measured for r in rows)
    table = comparison_markdown(rows)
    for r in rows:  # every run, misses included, is a row of the report
        assert f"{r.p50_error:+.1%}" in table and f"{r.p99_error:+.1%}" in table
    misses = [r for r in rows if not r.within]
    assert table.count("**no**") == len(misses)
    assert f"{len(rows) - len(misses)} of {len(rows)} runs within" in table


@pytest.mark.slow
def test_every_1mib_run_is_within_the_issue_tolerances(
    comparisons: list[RunComparison],
) -> None:
    misses = [(r.phase, r.placement, r.benchmark) for r in comparisons if not r.within]
    assert not misses
