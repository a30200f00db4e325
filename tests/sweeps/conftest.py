"""A sweep spec over a small OSU-pattern trace: two fabrics, 288 points (3 seeds)."""

from __future__ import annotations

from pathlib import Path

from tests.replay.conftest import osu_parquet


def write_spec(tmp: Path, seeds: int = 3, name: str = "t", extra_axes: str = "") -> Path:
    trace = osu_parquet(tmp, "alltoall", 8, 1 << 14, iterations=5)
    spec = tmp / "sweep.toml"
    spec.write_text(
        f"""[sweep]
name = "{name}"
traces = ["{trace.name}"]
seeds = {seeds}
seed = 7

[axes]
fabric = ["crossbar", "tree-2x2x4"]
placement = ["linear", "random"]
coll = ["", "alltoall=pairwise", "alltoall=bruck"]
"fabric.host.overhead_ns" = [100.0, 300.0]
compute_scale = [0.0, 1.0]
background = ["", "uniform:nodes=4:load=0.3:bytes=16K"]
{extra_axes}"""
    )
    return spec
