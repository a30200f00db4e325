"""`tailcast quickstart` (what `make demo` runs) on the bundled real data, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast.replay.fabric import bundled_fabrics
from tailcast.store import Catalog, ResultsDir
from tests.analysis.report_page import HEX_ID, check_svg, visible_text

pytestmark = pytest.mark.slow


def test_quickstart_builds_the_whole_pipeline(results_home: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tailcast", "quickstart", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    report = Path(doc["report"])
    assert report.is_file() and report.stat().st_size > 100_000
    html = report.read_text()
    assert html.count("<img") >= 10 and "data:image/png;base64," in html
    # Replays and runs named by what they are (issue 41: 32-hex ids in tables and legends).
    text = visible_text(html)
    assert not HEX_ID.findall(text)
    assert "halo.py · benes-psf-16" in text
    assert "alltoall 1 MiB · different_islands · background cross-8 · b = " in text
    for svg in (report.parent / "plots").glob("*.svg"):
        check_svg(svg)
    # One ARR-only benes_psf replay: no all-1.00 policy chart, a note saying why.
    assert "No policy comparison for 16 ports" in text and "(ARR only)" in text
    assert doc["steps"][0]["step"] == "load the bundled campaign"
    with Catalog(ResultsDir(results_home)) as cat:
        runs = cat.rows("SELECT count(*) AS n, count(DISTINCT locality) AS loc FROM runs")[0]
        assert runs == {"n": 72, "loc": 2}
        fabrics = {r["fabric"] for r in cat.rows("SELECT DISTINCT fabric FROM replays")}
        assert set(bundled_fabrics()) <= fabrics
        sims = cat.rows("SELECT count(DISTINCT replay_id) AS n FROM replay_iterations")[0]["n"]
        assert sims == 72  # every measured run replayed on the lab fabric
        lab = cat.rows(
            "SELECT count(*) AS n, count(DISTINCT phase) AS phases, max(len(bg_nodes)) AS jobs "
            "FROM lab_runs JOIN runs USING (run_id)"
        )[0]
        assert lab == {"n": 72, "phases": 4, "jobs": 2}  # recorded on the network lab
    # Running it again adds simulations but never duplicates the bundled campaign.
    again = subprocess.run(
        [sys.executable, "-m", "tailcast", "quickstart", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    with Catalog(ResultsDir(results_home)) as cat:
        assert cat.rows("SELECT count(*) AS n FROM runs")[0]["n"] == 72
