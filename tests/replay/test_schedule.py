"""`tailcast replay schedule`: the engine's per-rank program of one collective, timed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tailcast.cli.main import app
from tailcast.errors import UsageError
from tailcast.replay.fabric import load_fabric
from tailcast.replay.schedule import Request, schedule

runner = CliRunner()
# bundled `ideal`: alpha = 1 us, beta = 0.1 ns/B, unlimited ports, no handshake
ALPHA_US, BETA_US_PER_B = 1.0, 0.1e-3


def test_pipeline_program_and_times_follow_the_chain() -> None:
    seg = 256 << 10
    doc = schedule(Request("bcast=pipeline:segsize=256K", 4, 1 << 20), load_fabric("ideal"))
    assert (doc["algorithm"], doc["segsize_bytes"], doc["forced"]) == ("pipeline", seg, True)
    msg_us = ALPHA_US + seg * BETA_US_PER_B
    # 4 segments down a 3-hop chain: (4 + 3 - 1) message times
    assert doc["total_us"] == pytest.approx(6 * msg_us, rel=1e-6)
    assert doc["messages"] == 12
    root, leaf = doc["per_rank"][0], doc["per_rank"][3]
    sends = [s for s in root["steps"] if s["call"] == "isend"]
    assert [(s["peer"], s["bytes"]) for s in sends] == [(1, seg)] * 4
    # the root's k-th segment leaves when the (k-1)-th was delivered (send, wait, send ...)
    assert [s["sent_us"] for s in sends] == pytest.approx([k * msg_us for k in range(4)], rel=1e-4)
    assert {s["call"] for s in leaf["steps"]} == {"irecv", "wait"}
    assert leaf["exit_us"] == pytest.approx(doc["total_us"], abs=1e-3)  # whole ns


def test_a_small_count_rabenseifner_runs_the_basic_linear_program() -> None:
    """4.1.4's redscat_allgather falls back at count < pof2: 8 B of 8-byte doubles is 1
    element; 32 B of 1-byte chars is 32 >= 16 and keeps the algorithm."""
    fabric = load_fabric("ideal")
    raben = schedule(Request("allreduce=rabenseifner", 16, 8, dtype_bytes=8), fabric)
    linear = schedule(Request("allreduce=linear", 16, 8, dtype_bytes=8), fabric)
    assert raben["per_rank"] == linear["per_rank"]
    kept = schedule(Request("allreduce=rabenseifner", 16, 32), fabric)
    assert kept["per_rank"] != schedule(Request("allreduce=linear", 16, 32), fabric)["per_rank"]


def test_bad_requests_name_what_was_expected() -> None:
    fabric = load_fabric("ideal")
    with pytest.raises(UsageError, match="unknown collective 'bcst'"):
        schedule(Request("bcst", 4, 8), fabric)
    with pytest.raises(UsageError, match="root"):
        schedule(Request("bcast", 4, 8, root=4), fabric)


def test_cli_prints_json_and_writes_the_diagram(tmp_path: Path) -> None:
    png = tmp_path / "s.png"
    argv = ["replay", "schedule", "reduce=binomial", "-n", "8", "--size", "64K", "--json"]
    res = runner.invoke(app, [*argv, "--plot", str(png)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["algorithm"] == "binomial" and len(doc["per_rank"]) == 8
    assert any(s["call"] == "reduce" for s in doc["per_rank"][0]["steps"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = runner.invoke(app, ["replay", "schedule", "bcast", "-n", "4", "--size", "8"])
    assert text.exit_code == 0 and "fixed rules" in text.output and "rank 3" in text.output
