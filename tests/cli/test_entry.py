"""The console script's direct path: `trace convert SRC DST` without options runs without
Typer, with the same messages and exit codes as through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENTRY = [sys.executable, "-X", "importtime", "-m", "tailcast"]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ENTRY, *map(str, args)], capture_output=True, text=True, timeout=120)


def imported(err: str) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in err.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_plain_convert_imports_no_typer(tmp_path: Path) -> None:
    trace = tmp_path / "t.tit"
    trace.write_text("0 init\n1 init\n0 finalize\n1 finalize\n")
    out = run("trace", "convert", trace, tmp_path / "t.parquet")
    assert out.returncode == 0, out.stderr[-2000:]
    names = imported(out.stderr)
    assert "tailcast.cli.trace_convert" in names
    assert not {n for n in names if n.split(".")[0] in ("typer", "click", "pyarrow")}
    assert "wrote " in out.stderr and (tmp_path / "t.parquet").is_file()


def test_plain_convert_errors_are_one_line(tmp_path: Path) -> None:
    out = run("trace", "convert", tmp_path / "missing.tit", tmp_path / "t.parquet")
    assert out.returncode == 1
    lines = [ln for ln in out.stderr.splitlines() if not ln.startswith("import time:")]
    assert lines == [f"tailcast: error: {tmp_path / 'missing.tit'}: no such file or directory"]


def test_options_go_through_typer(tmp_path: Path) -> None:
    trace = tmp_path / "t.tit"
    trace.write_text("0 init\n0 finalize\n")
    out = run("trace", "convert", "--to", "tit", trace, tmp_path / "out.tit")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "typer" in imported(out.stderr)
