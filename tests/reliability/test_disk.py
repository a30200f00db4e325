"""Issue 19 §4: a full results file system and a read-only one (real tmpfs mounts): a clear
error naming the file, no partial file, the store still opens and keeps what it had; a
TAILCAST_HOME with spaces and non-ASCII letters works throughout."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import in_ci
from tests.reliability.conftest import TAILCAST, write_halo
from tests.replay.conftest import osu_parquet


@pytest.fixture()
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (needs root: the tests run as root here and in CI)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if mount.returncode != 0:
        message = f"cannot mount a tmpfs: {mount.stderr.strip()}"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _tailcast(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": str(home)}
    return subprocess.run([TAILCAST, *args], env=env, capture_output=True, text=True)


def _replays(home: Path) -> list[str]:
    out = _tailcast(home, "db", "sql", "SELECT replay_id FROM replays ORDER BY 1", "--json")
    assert out.returncode == 0, out.stderr
    return [r["replay_id"] for r in json.loads(out.stdout)]


def _no_partial_files(home: Path) -> None:
    hidden = [p for p in home.rglob(".tmp-*")]
    assert hidden == [], hidden
    tables = _tailcast(home, "db", "tables", "--json")
    assert tables.returncode == 0, tables.stderr
    listing = json.loads(tables.stdout)["tables"]
    assert all(t["problems"] == [] and t["pending"] == [] for t in listing), listing


def _fill(fs: Path, leave_bytes: int) -> None:
    """Takes all but `leave_bytes` of the file system with a file outside the store."""
    st = os.statvfs(fs)
    (fs / "filler").write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - leave_bytes))


# Both ways a replay stores its per-op times: results.write (in memory) and the streamed
# ops file (replay/ops_file.py).
@pytest.mark.parametrize("mode", ["--in-memory", "--stream"])
def test_full_disk_is_a_clear_error_and_the_store_still_opens(
    small_fs: Path, tmp_path: Path, mode: str
) -> None:
    home = small_fs / "my results ü Ωmega"
    small = osu_parquet(tmp_path, "allreduce", 4, 8, iterations=10)
    kept = _tailcast(home, "replay", "run", str(small), "--json")
    assert kept.returncode == 0, kept.stderr
    kept_id = json.loads(kept.stdout)["replay_id"]
    # 384 K rows: the replay's replay_ops file (~1.4 MB in memory, ~130 kB streamed, whose
    # rows carry no per-message columns) outgrows the 64 KiB left.
    big = write_halo(tmp_path / "big.parquet", iterations=1000)
    _fill(small_fs, 64 << 10)
    full = _tailcast(home, "replay", "run", mode, str(big))
    assert full.returncode == 1, full.stderr
    line = full.stderr.strip()
    assert "\n" not in line and line.startswith(f"tailcast: error: {home}/"), line
    assert "cannot write" in line and "No space left on device" in line, line
    assert _replays(home) == [kept_id]
    _no_partial_files(home)


def test_read_only_results_directory(small_fs: Path, tmp_path: Path) -> None:
    home = small_fs / "read only ü"
    trace = osu_parquet(tmp_path, "bcast", 4, 64, iterations=5)
    kept = _tailcast(home, "replay", "run", str(trace), "--json")
    assert kept.returncode == 0, kept.stderr
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    refused = _tailcast(home, "replay", "run", str(trace))
    assert refused.returncode == 1, refused.stderr
    line = refused.stderr.strip()
    assert line.startswith("tailcast: error: ") and "Read-only file system" in line, line
    assert _replays(home) == [json.loads(kept.stdout)["replay_id"]]
    _no_partial_files(home)
    # A query needs no write access to the store.
    report = _tailcast(home, "report", "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
