"""Issue 40 on the campaign bundled with the quickstart, out of sample: the lab fabric's
host is fitted to the phase without background jobs (its 4 B runs), the background's own
detour source to the 4 B runs beside background that shares no link (local-8), and both
are validated on the two phases whose background shares links (cross-4, cross-8), which
the fit never reads, and on all 72 runs; beside its background every run's detours gain
that source, as often as the background's traffic makes it (lab/host_load.py). The figures
asserted are the ones this model reaches (DESIGN.md, "Calibrating the host"), beside the
uncalibrated fabric's; where they miss the issue's bar the network model, not the host,
is what limits them (the same section says by how much)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tailcast.calibration.from_campaign import (
    CampaignCalibration,
    FitSelection,
    Validation,
    calibrate_campaign,
    validate,
)
from tailcast.calibration.validation import figures
from tailcast.lab.compare import LabReplayer, compare_runs
from tailcast.replay.fabric import load_fabric
from tailcast.store import ResultsDir

FIT = FitSelection(campaign="quickstart", phases=["none", "local-8"])
MIB = 1 << 20


@pytest.fixture(scope="module")
def calibration(
    bundled_store: ResultsDir, tmp_path_factory: pytest.TempPathFactory
) -> CampaignCalibration:
    return calibrate_campaign(
        bundled_store, load_fabric("lab"), FIT, tmp_path_factory.mktemp("fit")
    )


@pytest.fixture(scope="module")
def validation(
    bundled_store: ResultsDir,
    calibration: CampaignCalibration,
    tmp_path_factory: pytest.TempPathFactory,
) -> Validation:
    replayer = calibration.replayer(None, tmp_path_factory.mktemp("val"), seed=0)
    return validate(replayer, bundled_store, calibration)


def test_fit_reads_only_the_quiet_small_runs(calibration: CampaignCalibration) -> None:
    assert len(calibration.runs) == 12
    assert {r["phase"] for r in calibration.runs} == {"none", "local-8"}
    assert {r["msg_size_bytes"] for r in calibration.runs} == {4}
    # the host itself is fitted to the quiet runs only (their losses: the host fit's)
    quiet = {r["run_id"] for r in calibration.runs if not r["bg_nodes"]}
    assert len(quiet) == 6 and all(rid in calibration.result.run_losses for rid in quiet)
    # Open MPI 4.1.4 TCP: btl_tcp_eager_limit 65536 - ob1's 56-byte header
    assert calibration.eager_threshold_bytes == 65480
    fabric = tomllib.loads(calibration.fabric_text)
    assert fabric["host"]["eager_threshold_bytes"] == 65480
    assert fabric["host"]["noise"]["kind"] == "poisson"
    assert fabric["host"]["noise"]["rate_per_s"] > 0
    for r in calibration.runs:  # provenance: every run it came from, with its loss
        assert f"run {r['run_id'][:8]}: loss" in calibration.fabric_text


def test_each_run_replays_with_the_background_detours_its_traffic_makes(
    calibration: CampaignCalibration, tmp_path: Path
) -> None:
    # local-8's background raises the measured 4 B medians 1.5-2x without sharing a link
    detours = calibration.background_detours
    assert detours is not None and detours.rate_per_s_per_mbps > 0
    replayer = calibration.replayer(None, tmp_path, seed=0)
    host = tomllib.loads(calibration.fabric_text)["host"]
    assert "extra" not in host["noise"]
    for run in calibration.runs:
        # a 4-node all-to-all of 1 MiB moves 12 MiB per call
        calls, seconds = sum(run["bg_calls"] or []), (run["bg_seconds"] or [1.0])[0]
        mbps = calls * 12 * (1 << 20) / seconds / 1e6
        noise = replayer.run_fabric(run).table["host"]["noise"]
        assert (mbps > 0) == bool(run["bg_nodes"]) == ("extra" in noise)
        # the quiet host's own detours stay as fitted
        assert noise["rate_per_s"] == host["noise"]["rate_per_s"]
        assert noise["length_ns"] == host["noise"]["length_ns"]
        if mbps > 0:
            extra = noise["extra"]
            assert extra["rate_per_s"] == pytest.approx(detours.rate_per_s_per_mbps * mbps, 1e-3)
            assert extra["length_ns"] == pytest.approx(detours.length_ns)
            assert extra["length_sigma"] == pytest.approx(detours.length_sigma, abs=1e-3)
    assert f"--background-detours {detours.option()}" in calibration.fabric_text


def test_held_out_phases_are_never_fitted(validation: Validation) -> None:
    assert validation.held_out.runs == 36
    assert validation.all_runs.runs == 72
    assert validation.fitted.runs == 12
    held = {r.phase for r in validation.rows} - {"none", "local-8"}
    assert held == {"cross-4", "cross-8"}


def test_out_of_sample_figures(
    bundled_store: ResultsDir, validation: Validation, tmp_path: Path
) -> None:
    held, every = validation.held_out, validation.all_runs
    size = {s.msg_size_bytes: s for s in held.sizes}
    # the same runs on the uncalibrated lab fabric (no noise): point masses at 4 B
    bare = compare_runs(
        LabReplayer(load_fabric("lab"), None, tmp_path), "quickstart", [4], results=bundled_store
    )
    bare_held = figures("bare", [r for r in bare if r.phase in ("cross-4", "cross-8")])
    assert bare_held.sizes[0].tail_ratio_simulated == pytest.approx(1.0, abs=0.01)
    assert bare_held.median_ks >= 0.9
    # host noise gives the small-message tail its shape, out of sample (median KS at 4 B
    # 0.49 when background only made the quiet host's detours more frequent)
    assert size[4].median_ks <= 0.35
    assert size[4].tail_ratio_simulated >= 3.0
    # issue 40's third figure (median simulated p99/p50 within 30 % per size class) holds
    # at 1 MiB and, over all 72 runs, at 4 B (+2 %; +57 % with the quiet host's detours
    # made more frequent instead of the background's own); at 32 KiB the simulated tails
    # are lighter (-44 % over all 72 runs, held out -62 %)
    assert abs(size[MIB].tail_ratio_error) <= 0.30
    by_size = {s.msg_size_bytes: s for s in every.sizes}
    assert abs(by_size[4].tail_ratio_error) <= 0.30
    # htb's buckets, occupancy, the background's detours and the loop's own pause bring the
    # distributions closer than flat links, free o, detours at the load average and
    # back-to-back iterations did (median KS 0.88 over all 72, 25 within, at seed 0); seeds
    # 1 and 2 give 33 and 32 within, KS 0.47 and 0.45 (held out 0.36 and 0.39)
    assert every.median_ks <= 0.50 and held.median_ks <= 0.42
    assert every.within >= 34
    # one 1 MiB run misses: bcast across islands beside cross-4, p50 -20 % (how its
    # iterations fall against the background job's calls; -6 % with the longer pause)
    assert by_size[MIB].within >= 23
    # The loop's pause is what it slept (1 ms), not its wall time per iteration (~4.7 ms,
    # mpirun's launch included): across islands the buckets are then still in debt from
    # the previous iteration, as on the lab (32 KiB reduce chain, p50 1521 µs measured,
    # 1442 µs simulated; 256 µs with the longer pause); median KS at 32 KiB 0.84 before
    assert by_size[32768].median_ks <= 0.6
    assert by_size[32768].within >= 6
    # the bar is not reached: if that changes, raise these assertions
    assert not every.meets_bar


def _tailcast(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tailcast", *args], capture_output=True, text=True, env=env
    )


def test_cli_writes_the_fabric_and_prints_residuals(
    bundled_store: ResultsDir, tmp_path: Path
) -> None:
    out, doc = tmp_path / "lab-calibrated.toml", tmp_path / "calibration.json"
    run = _tailcast(
        bundled_store.root, "calibrate", "--campaign", "quickstart", "--fit-phase", "none",
        "--fabric-out", str(out), "--out", str(doc), "--no-validate",
        "--workdir", str(tmp_path / "w"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    fabric = load_fabric(out)
    assert fabric.table["host"]["noise"]["kind"] == "poisson"
    for key in ("overhead_ns", "link_latency_ns", "detour_share", "length_ns", "length_sigma"):
        assert f"  {key} = " in run.stdout  # each value with the loss around it
    record = json.loads(doc.read_text())
    assert len(record["runs"]) == 6 and record["fit_phases"] == ["none"]


def test_cli_refuses_a_phase_with_no_runs(bundled_store: ResultsDir, tmp_path: Path) -> None:
    run = _tailcast(
        bundled_store.root, "calibrate", "--fit-phase", "nosuch", "--workdir", str(tmp_path)
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error:") and "nosuch" in lines[0]


def test_lab_compare_adds_the_background_detours_it_is_given(
    bundled_store: ResultsDir, tmp_path: Path
) -> None:
    """`lab compare --background-detours` (what `calibrate` prints) changes the replays of
    the runs beside background and no other."""

    def compare(*extra: str) -> dict[str, dict[str, float]]:
        run = _tailcast(
            bundled_store.root, "lab", "compare", "--campaign", "quickstart", "--sizes", "4",
            "--workdir", str(tmp_path / "w"), "--json", *extra,
        )  # fmt: skip
        assert run.returncode in (0, 3), run.stderr  # 3: some run outside the tolerances
        return {r["run_id"]: r for r in json.loads(run.stdout)}

    plain = compare()
    with_detours = compare("--background-detours", "80:20000:1")
    assert plain.keys() == with_detours.keys() and len(plain) == 24
    for rid, row in plain.items():
        moved = row["p50_simulated_us"] != with_detours[rid]["p50_simulated_us"]
        assert moved == (row["background_jobs"] > 0), row


@pytest.mark.parametrize("value", ["80:20000", "80:0:1", "a:b:c", "-1:20000:1"])
def test_lab_compare_refuses_malformed_background_detours(
    bundled_store: ResultsDir, tmp_path: Path, value: str
) -> None:
    run = _tailcast(
        bundled_store.root, "lab", "compare", "--background-detours", value,
        "--workdir", str(tmp_path),
    )  # fmt: skip
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error:"), run.stderr
    assert "--background-detours" in lines[0] and "RATE_PER_S_PER_MBPS" in lines[0]


def test_lab_compare_refuses_to_add_background_detours_to_a_measured_profile(
    bundled_store: ResultsDir, tmp_path: Path
) -> None:
    fabric = tmp_path / "lab-measured.toml"
    fabric.write_text(
        load_fabric("lab").toml_text
        + '\n[host.noise]\nkind = "empirical"\nwork_ns = 1e9\ndetours_ns = [20000.0]\n'
    )
    run = _tailcast(
        bundled_store.root, "lab", "compare", "--campaign", "quickstart", "--sizes", "4",
        "--fabric", str(fabric), "--background-detours", "80:20000:1",
        "--workdir", str(tmp_path / "w"),
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tailcast: error:"), run.stderr
    assert "'empirical'" in lines[0] and "--background-detours" in lines[0]
