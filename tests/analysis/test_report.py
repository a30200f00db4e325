"""The HTML report: built through the real CLI entry point, parsed, and rendered by headless
Chromium (Debian package `chromium`)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from tailcast.analysis.report import build_report
from tailcast.lab.compare import LabReplayer, lab_runs
from tailcast.quickstart import bundled_dir
from tailcast.replay.fabric import bundled_fabrics, load_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.store import Catalog, ResultsDir
from tests.analysis.campaign import write_campaign, write_replay
from tests.analysis.report_page import HEX_ID, check_svg, one_format_per_column, visible_text
from tests.conftest import in_ci

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MEASURED_SQL = (
    "SELECT s.latency_us FROM samples s JOIN runs r USING (run_id) "
    "WHERE r.benchmark = 'osu_reduce' AND r.msg_size_bytes = 4"
)


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.srcs: list[str] = []
        self.sections: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self.srcs.append(values.get("src") or "")
        if tag == "section":
            self.sections.append(values.get("id") or "")


def _parse(html: Path) -> _Images:
    parser = _Images()
    parser.feed(html.read_text(encoding="utf-8"))
    return parser


def _check_images(html: Path, srcs: list[str]) -> None:
    for src in srcs:
        if src.startswith("data:"):
            header, _, payload = src.partition(",")
            assert header == "data:image/png;base64"
            data = base64.b64decode(payload, validate=True)
        else:
            target = html.parent / src
            assert target.is_file(), f"broken image {src}"
            data = target.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000


def _run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tailcast", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        if in_ci():
            pytest.fail("chromium is missing in CI (scripts/system-packages.txt)")
        pytest.skip("chromium not installed")
    return path


def _screenshot(chromium: str, html: Path, png: Path, profile: Path) -> None:
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--screenshot={png}",
            "--window-size=1400,4000",
            html.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )


@pytest.mark.slow
def test_report_from_a_full_store_renders_in_chromium(results_home: Path, tmp_path: Path) -> None:
    rd = ResultsDir()
    write_campaign(rd)
    replay_id = write_replay(rd)
    out = tmp_path / "report"
    proc = _run_cli(
        results_home,
        "report",
        "--out",
        str(out),
        "--compare",
        f"{replay_id}={MEASURED_SQL}",
        "--fit-time-limit",
        "1",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    html = Path(doc["html"])
    assert html == out / "index.html"

    page = _parse(html)
    assert len(page.srcs) == len(doc["figures"]) >= 20
    _check_images(html, page.srcs)
    assert all(s.startswith("data:") for s in page.srcs)  # embedded by default
    for fig in doc["figures"]:
        assert Path(fig["png"]).stat().st_size > 0 and Path(fig["svg"]).stat().st_size > 0
    stems = {Path(f["png"]).stem for f in doc["figures"]}
    assert {
        "fig1_largest_group",
        "fig3_locality_0",
        "fig5_b_0",
        "ccdf_measured",
        "fig4_b_vs_latency",
        "utilisation_b",
        "ccdf_replays",
        "qq_0",
    } <= stems
    assert page.sections == [
        "store",
        "measured",
        "fits",
        "correlation",
        "osu",
        "utilisation",
        "replays",
        "compare",
        "tails_vs_b",
        "photonic_psf",
        "photonic_gemini",
    ]
    text = html.read_text(encoding="utf-8")
    assert "provenance" in text and "FROM samples s JOIN runs r" in text
    assert str(rd.files("samples")[0]) in text  # files behind every number are listed
    assert "lognorm" in text or "Top fits" in text

    shot = tmp_path / "screenshot.png"
    _screenshot(_chromium(), html, shot, tmp_path / "chromium-profile")
    assert shot.read_bytes().startswith(PNG_MAGIC) and shot.stat().st_size > 100_000
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (4000, 1400)
    assert float(np.std(pixels[..., :3])) > 0.05  # not a blank page
    keep = os.environ.get("TAILCAST_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


@pytest.mark.slow
def test_report_without_embedding_links_files(results_home: Path, tmp_path: Path) -> None:
    rd = ResultsDir()
    write_campaign(rd, runs_per_group=3, iterations=60)
    res = build_report(tmp_path / "r", rd, embed=False, fit_groups=0)
    page = _parse(res.html)
    assert page.srcs and not any(s.startswith("data:") for s in page.srcs)
    _check_images(res.html, page.srcs)
    assert len(page.srcs) == len(res.figures)


def test_report_on_an_empty_store_degrades_gracefully(results_home: Path, tmp_path: Path) -> None:
    res = build_report(tmp_path / "empty", ResultsDir(), fit_groups=1)
    assert res.html.is_file() and not res.figures
    notes = " ".join(n for s in res.sections for n in s.notes)
    assert "No measured samples" in notes and "No replays" in notes
    assert "No utilisation snapshots" in notes and "No OSU summaries" in notes
    assert _parse(res.html).sections[0] == "store"


@pytest.mark.slow
def test_report_names_replays_and_keeps_legends_off_the_data(
    results_home: Path, tmp_path: Path
) -> None:
    """The quickstart's kind of store (its bundled campaign, the captured halo on every
    bundled fabric, lab runs replayed beside their background jobs): the page and every
    figure name replays and runs by trace, fabric and parameters, never by id; legends sit
    off the axes and never draw two series alike; numbers keep one format per column."""
    results = ResultsDir()
    for table in ("runs", "samples", "utilisation", "snapshots", "lab_runs"):
        shutil.copytree(bundled_dir() / table, results.table_dir(table))
    halo = bundled_dir() / "halo-4rank.parquet"
    for name in bundled_fabrics():  # 14: the CCDF's 12 curves need line styles too
        replay_trace(halo, load_fabric(name), ReplayOptions(), results)
    replayer = LabReplayer(load_fabric("lab"), results, tmp_path / "lab")
    with Catalog(results) as cat:
        runs = [
            r
            for r in lab_runs(cat, None, [1 << 20])
            if r["benchmark"] == "alltoall" and r["placement"] == "different_islands"
        ]
    pairs = []
    for run in [r for r in runs if r["phase"] in ("none", "cross-8")][:2]:
        replay_id, _ = replayer.replay_run(run)
        pairs.append(
            (replay_id, f"SELECT latency_us FROM samples WHERE run_id = '{run['run_id']}'")
        )
    out = tmp_path / "report"
    compare = [arg for rid, sql in pairs for arg in ("--compare", f"{rid}={sql}")]
    proc = _run_cli(results_home, "report", "--out", str(out), "--fit-groups", "0", *compare)
    assert proc.returncode == 0, proc.stderr
    html = (out / "index.html").read_text(encoding="utf-8")

    visible = visible_text(html)
    assert not HEX_ID.findall(visible)
    assert "halo.py · crossbar" in visible and "halo.py · torus-4x4x4" in visible
    assert "osu_alltoall 1 MiB · lab · nodes node[" in visible
    assert "bg traces on endpoints" in visible  # the background the replay ran beside
    assert "alltoall 1 MiB · different_islands · background cross-8 · b = " in visible
    assert "total_time (ms)" in visible  # ns shown in ms, unit in the header
    one_format_per_column(html)

    figures = {svg.stem: check_svg(svg) for svg in sorted((out / "plots").glob("*.svg"))}
    assert len(figures) >= 20
    ccdf = " ".join(figures["ccdf_replays"])
    assert "halo.py · crossbar" in ccdf and "halo.py · ideal" in ccdf
    qq = " ".join(figures["qq_1"])
    assert "background cross-8" in qq and "osu_alltoall 1 MiB · lab" in qq

    shot = tmp_path / "screenshot.png"
    _screenshot(_chromium(), out / "index.html", shot, tmp_path / "chromium-profile")
    pixels = mpimg.imread(shot)
    assert pixels.shape[:2] == (4000, 1400)
    assert float(np.std(pixels[..., :3])) > 0.05  # not a blank page
    keep = os.environ.get("TAILCAST_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
