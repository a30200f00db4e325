"""`tailcast calibrate` on a campaign whose runs recorded noise profiles: the host's noise is
the profiles the runs name, pooled as measured (the engine's empirical table), and only o
and the link latency are fitted. The profile is measured here, on this host, by the real
fixed-work-quantum loop (`tailcast agent noise-profile --local`); the bundled quiet 4 B runs
are made to name it, as the agent would have recorded it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tailcast.calibration.from_campaign import FitSelection, calibrate_campaign
from tailcast.collectors.noise_profile import stored_profiles
from tailcast.replay.fabric import load_fabric
from tailcast.store import ResultsDir
from tailcast.store.parquet_io import read_table


def test_recorded_profiles_are_the_noise_and_only_o_and_links_are_fitted(
    bundled_store: ResultsDir, tmp_path: Path
) -> None:
    env = {**os.environ, "TAILCAST_HOME": str(bundled_store.root)}
    subprocess.run(
        [sys.executable, "-m", "tailcast", "agent", "noise-profile", "--local", "--seconds", "1"],
        capture_output=True, text=True, check=True, timeout=120, env=env,
    )  # fmt: skip
    (profile,) = stored_profiles(bundled_store)
    quiet_small = 0
    for path in bundled_store.files("runs"):
        rows = read_table(path, "runs").to_pylist()
        for row in rows:
            if row["msg_size_bytes"] == 4:
                row["noise_profiles"] = json.dumps({n: profile["profile_id"] for n in row["nodes"]})
                quiet_small += 1
        bundled_store.write("runs", rows, name=path.stem)
    assert quiet_small == 24

    cal = calibrate_campaign(
        bundled_store, load_fabric("lab"), FitSelection("quickstart", ["none"]), tmp_path
    )
    assert cal.noise_profiles == [profile["profile_id"]]
    assert set(cal.result.profiles) == {"overhead_ns", "link_latency_ns"}
    noise = tomllib.loads(cal.fabric_text)["host"]["noise"]
    assert noise["kind"] == "empirical"
    assert noise["detours_ns"] == profile["detours_ns"]
    assert noise["work_ns"] == profile["quanta"] * profile["quantum_ns"]
    assert f"noise measured: profiles {profile['profile_id'][:8]}" in cal.fabric_text
    # a run without a profile: the detours are fitted instead
    for path in bundled_store.files("runs"):
        rows = read_table(path, "runs").to_pylist()
        for row in rows:
            if row["benchmark"] == "bcast":
                row["noise_profiles"] = None
        bundled_store.write("runs", rows, name=path.stem)
    fitted = calibrate_campaign(
        bundled_store, load_fabric("lab"), FitSelection("quickstart", ["none"]), tmp_path
    )
    assert fitted.noise_profiles == [] and "detour_share" in fitted.result.profiles
    assert tomllib.loads(fitted.fabric_text)["host"]["noise"]["kind"] == "poisson"
