"""Issue 19 §7: text from outside (file and fabric names, ids, job names) never reaches a
shell, never breaks the HTML report and never changes SQL."""

from __future__ import annotations

import ast
import json
import os
import subprocess
from pathlib import Path

from tailcast.analysis.sources import resolve
from tailcast.store import Catalog, ResultsDir
from tests.conftest import REPO
from tests.reliability.conftest import TAILCAST
from tests.replay.conftest import osu_parquet

HOSTILE = "<img src=x onerror=alert(1)>"


def test_hostile_names_are_escaped_in_the_report(tmp_path: Path) -> None:
    env = {**os.environ, "TAILCAST_HOME": str(tmp_path / "home")}
    ideal = (REPO / "src/tailcast/replay/fabrics/ideal.toml").read_text()
    fabric = tmp_path / f"{HOSTILE}.toml"
    fabric.write_text(ideal)
    hostile_dir = tmp_path / "<script>alert(2)<"
    hostile_dir.mkdir()
    trace = osu_parquet(hostile_dir, "allreduce", 4, 8, iterations=20)
    run = subprocess.run(
        [TAILCAST, "replay", "run", str(trace), "--fabric", str(fabric), "--json"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["fabric"] == HOSTILE  # the name really is in the store
    out = tmp_path / "report"
    report = subprocess.run(
        [TAILCAST, "report", "--out", str(out)], env=env, capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    html = (out / "index.html").read_text()
    assert HOSTILE not in html and "<script>alert" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_an_id_with_quotes_does_not_change_the_query(tmp_path: Path) -> None:
    results = ResultsDir(tmp_path)
    for rid in ("a", "b"):
        results.write("replay_iterations", {"replay_id": [rid], "iteration": [0],
                                            "latency_us": [1.0]})  # fmt: skip
    with Catalog(results) as catalog:
        assert catalog.sql("SELECT count(*) AS n FROM replay_iterations WHERE replay_id = ?",
                           ["a' OR '1'='1"]).column("n")[0].as_py() == 0  # fmt: skip
        assert resolve("a", catalog).table.num_rows == 1


def test_no_subprocess_goes_through_a_shell() -> None:
    """Every subprocess call passes an argv list: none has shell=True, none is os.system or
    os.popen (job names, paths and comments from squeue or traces are never shell text)."""
    offenders = []
    for path in sorted((REPO / "src/tailcast").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = ast.unparse(node.func)
            if func in {"os.system", "os.popen"}:
                offenders.append(f"{path}:{node.lineno}: {func}")
            for kw in node.keywords:
                if kw.arg == "shell" and not (
                    isinstance(kw.value, ast.Constant) and kw.value.value is False
                ):
                    offenders.append(f"{path}:{node.lineno}: shell={ast.unparse(kw.value)}")
    assert offenders == []
