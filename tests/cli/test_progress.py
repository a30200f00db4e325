"""Progress bars: on a terminal the long steps draw a rich bar on stderr; piped, they add
nothing (logs and pipes get the results only)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tailcast.traces.io import write_trace
from tailcast.traces.synth.osu import osu_trace

EXE = [sys.executable, "-m", "tailcast"]


def _trace(tmp: Path) -> Path:
    table, meta = osu_trace("allreduce", 8, [64, 4096], 200)
    return write_trace(table, tmp / "t.parquet", meta)


def _on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """Runs with stderr on a pseudo-terminal; returns the exit code and what it drew."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    return proc.wait(timeout=120), drawn


def test_replay_draws_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    args = [*EXE, "replay", "run", "--no-store", "--stream", str(trace), "--json"]
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    code, drawn = _on_terminal(args, env)
    assert code == 0
    assert b"replay" in drawn and b"\x1b[" in drawn  # the bar, drawn with escape codes
    piped = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert piped.returncode == 0 and piped.stderr == ""
    assert json.loads(piped.stdout)["streamed"] is True
    off = {**env, "TAILCAST_PROGRESS": "0"}
    code, drawn = _on_terminal(args, off)
    assert code == 0 and drawn == b""


def test_replay_reports_time_and_rate(tmp_path: Path) -> None:
    trace = _trace(tmp_path)
    out = subprocess.run(
        [*EXE, "replay", "run", "--no-store", str(trace), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    timing = json.loads(out.stdout)["timing"]
    assert timing["wall_s"] > 0 and timing["cpu_s"] > 0
    assert timing["process_cpu_s"] >= timing["cpu_s"]
    assert timing["actions_per_cpu_s"] > 0
    text = subprocess.run(
        [*EXE, "replay", "run", "--no-store", str(trace)], capture_output=True, text=True,
        timeout=120,
    ).stdout  # fmt: skip
    assert "M actions per CPU-second" in text.splitlines()[-1]
