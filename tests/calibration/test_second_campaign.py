"""Issue 40's second campaign: the lab fabric calibrated on the quickstart campaign alone (its
4 B runs without background and beside background sharing no link, as `tailcast quickstart`
does) replays a campaign recorded
later on the same lab with collectives and sizes the first lacks (allreduce, allgather at
1 KiB, 16 KiB and 256 KiB; slurm_jobs/lab-validation.toml, recorded 2026-11-29 with
scripts/record_quickstart_data.py into tests/data/lab-validation). Nothing of it was seen by
the fit.

Measured at replay seeds 0 / 1 / 2: 0 / 2 / 1 of 48 runs within p50 ±15 % and p99 ±30 %,
median KS 0.52 / 0.54 / 0.54 (0.66 / 0.64 / 0.63 when the loop's pause was taken from its
wall time, mpirun's launch included); the uncalibrated lab fabric: 1 of 48, KS 0.83. The
calibration brings the distributions closer but does not reach the bar (58 of 72 on the
first campaign, the same share here): the measured tails are heavier (simulated p99/p50
66 % lighter at 1 KiB, 62 % at 16 KiB; the quiet runs' p99 is 144-271 µs at 1 KiB where
the first campaign's quiet 4 B runs had 215-1460 µs: the shared host's detours differ
between the two days) and the 256 KiB runs replay faster than measured
(allreduce p50 -26 to -50 %, allgather -0 to -36 %; KS 0.84), where the 1 MiB runs of the
first campaign are within 15 %: what the replay lacks between the two sizes (TCP's pacing,
the rendezvous steps' wake-ups on the shared cores) is not settled.
These assertions hold the figures the model reaches; raise them as it improves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tailcast.calibration.from_campaign import FitSelection, calibrate_campaign
from tailcast.calibration.validation import Figures, figures
from tailcast.lab.compare import LabReplayer, compare_runs
from tailcast.replay.fabric import load_fabric
from tailcast.store import ResultsDir

SECOND = Path(__file__).resolve().parents[1] / "data" / "lab-validation"
FIT = FitSelection(campaign="quickstart", phases=["none", "local-8"])


@pytest.fixture(scope="module")
def both_campaigns(bundled_store: ResultsDir) -> ResultsDir:
    for table in SECOND.iterdir():
        for f in table.glob("*.parquet"):
            shutil.copy(f, bundled_store.table_dir(table.name) / f.name)
    return bundled_store


@pytest.fixture(scope="module")
def second(both_campaigns: ResultsDir, tmp_path_factory: pytest.TempPathFactory) -> Figures:
    cal = calibrate_campaign(
        both_campaigns, load_fabric("lab"), FIT, tmp_path_factory.mktemp("fit")
    )
    assert {r["campaign"] for r in cal.runs} == {"quickstart"}
    replayer = cal.replayer(both_campaigns, tmp_path_factory.mktemp("val"), seed=0)
    rows = compare_runs(replayer, "validation", results=both_campaigns)
    assert {r.benchmark for r in rows} == {"allreduce", "allgather"}
    return figures("second campaign", rows)


def test_the_second_campaign_is_what_the_first_lacks(second: Figures) -> None:
    assert second.runs == 48
    assert [s.msg_size_bytes for s in second.sizes] == [1024, 16384, 262144]


def test_the_first_campaigns_calibration_carries_over_but_misses_the_bar(
    both_campaigns: ResultsDir, second: Figures, tmp_path: Path
) -> None:
    bare = figures(
        "bare",
        compare_runs(
            LabReplayer(load_fabric("lab"), None, tmp_path), "validation", results=both_campaigns
        ),
    )
    assert second.median_ks <= 0.56
    assert second.median_ks <= bare.median_ks - 0.1
    # the simulated small-message tails have a shape, though a lighter one than measured
    assert second.sizes[0].tail_ratio_simulated >= 3.0
    assert not second.meets_bar
