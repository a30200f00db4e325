"""Calibration of a tree-topology cluster (the lab, or any Slurm cluster with topology/tree):
for one node pair per link class — same group, same island, different islands — a 1-byte
ping-pong (the built-in `latency` benchmark, OSU's osu_latency method) and a streaming
bandwidth run (tailcast.lab.bandwidth, OSU's osu_bw method), one Slurm job per pair, one
after the other so they never share a link.

What it derives, per link class: the achievable TCP/MPI rate (the bandwidth run's rate:
on a tree whose rates fall towards the top, a pair's bottleneck is the highest link it
crosses, so same_group measures the node links, same_island the group uplinks and
different_islands the island link) and the per-message cost. A path of class c crosses
2, 4 or 6 links; a least-squares line through (links crossed, fastest one-way time) gives
the per-link latency (slope) and the per-message software overhead (intercept); when the
line falls (hops too cheap to see) the latency per link is 0 and the overhead the mean.
The fastest time, not the median: on a shared 2-core host the median of a 1-byte
ping-pong is mostly waiting to be scheduled and moved from 46-90 us to 0.7-3.9 ms between
two calibrations an hour apart (host load 9 and 15), while the minimum stayed at 26-96 us.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.agent.runners import load_builtin_result
from tailcast.collectors.topology import (
    DIFFERENT_ISLANDS,
    SAME_GROUP,
    SAME_ISLAND,
    Topology,
    UnknownNodeError,
)
from tailcast.errors import InputError, UsageError
from tailcast.lab.jobs import ENDED, submit, wait_for

CLASSES = (SAME_GROUP, SAME_ISLAND, DIFFERENT_ISLANDS)
LINKS_CROSSED = {SAME_GROUP: 2, SAME_ISLAND: 4, DIFFERENT_ISLANDS: 6}
TOP_LEVEL = {SAME_GROUP: "node", SAME_ISLAND: "group", DIFFERENT_ISLANDS: "island"}


@dataclass(frozen=True)
class CalibrationSettings:
    ping_iterations: int = 1000
    ping_warmup: int = 100
    bw_size_bytes: int = 1 << 20
    bw_window: int = 16
    bw_iterations: int = 8
    bw_warmup: int = 1
    timeout_s: float = 1800.0


@dataclass(frozen=True)
class ClassMeasurement:
    locality: str
    nodes: list[str]
    links_crossed: int
    one_way_us_p50: float  # ping-pong: half the round trip, max over the two ranks
    one_way_us_p99: float
    one_way_us_min: float
    rate_bit_s: float  # OSU's figure: all timed bytes over all timed seconds
    rate_bit_s_iterations: list[float]
    reduce_ns_per_byte: float  # MPI_Reduce_local, MPI_SUM on MPI_SIGNED_CHAR


@dataclass(frozen=True)
class Calibration:
    classes: dict[str, ClassMeasurement]
    overhead_us: float  # intercept: per-message software cost, both ends
    link_latency_us: float  # slope: per link crossed
    rate_bit_s: dict[str, float]  # tree level -> achievable rate
    gamma_ns_per_byte: float  # median over the classes' reduce timings
    settings: CalibrationSettings
    host_load_1m: float = 0.0  # the host's load while calibrating (noise record)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def calibration_pairs(topo: Topology) -> dict[str, list[str]]:
    try:
        return {c: topo.pick_nodes(2, c) for c in CLASSES}
    except UnknownNodeError as exc:
        raise UsageError(f"calibration needs two islands of two groups: {exc}") from exc


def _measure_pair(
    locality: str, nodes: list[str], workdir: Path, s: CalibrationSettings
) -> ClassMeasurement:
    ping = workdir / f"ping-{locality}.npz"
    bandwidth = workdir / f"bw-{locality}.json"
    mpirun = ["mpirun", "-np", "2", "--map-by", "node", sys.executable, "-m"]
    job = submit(
        f"calibrate-{locality}",
        nodes,
        [
            [*mpirun, "tailcast.agent.builtin", "--benchmark", "latency", "--size", "1",
             "--iterations", str(s.ping_iterations), "--warmup", str(s.ping_warmup),
             "--interval-ms", "0", "--out", str(ping)],
            [*mpirun, "tailcast.lab.bandwidth", "--size", str(s.bw_size_bytes),
             "--window", str(s.bw_window), "--iterations", str(s.bw_iterations),
             "--warmup", str(s.bw_warmup), "--out", str(bandwidth)],
        ],
        workdir,
    )  # fmt: skip
    end = wait_for(job, ENDED, s.timeout_s)
    if end != "COMPLETED" or not ping.exists() or not bandwidth.exists():
        log = job.output.read_text(errors="replace")[-2000:] if job.output.exists() else ""
        raise InputError(job.output, f"calibration job {job.job_id} ended {end}:\n{log}")
    times = load_builtin_result(ping).times_us
    one_way = np.nanmax(times, axis=1)
    try:
        bw = json.loads(bandwidth.read_text())
        rate = float(bw["rate_bit_s"])
        per_iteration = [float(x) for x in bw["iteration_rate_bit_s"]]
        gamma = float(bw["reduce_local_ns_per_byte"])
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(bandwidth, f"not a bandwidth result ({exc})") from exc
    return ClassMeasurement(
        locality=locality,
        nodes=list(nodes),
        links_crossed=LINKS_CROSSED[locality],
        one_way_us_p50=float(np.percentile(one_way, 50)),
        one_way_us_p99=float(np.percentile(one_way, 99)),
        one_way_us_min=float(one_way.min()),
        rate_bit_s=rate,
        rate_bit_s_iterations=per_iteration,
        reduce_ns_per_byte=gamma,
    )


def derive(classes: dict[str, ClassMeasurement], settings: CalibrationSettings) -> Calibration:
    """Per-link latency and per-message overhead from a line through the fastest one-way
    times; the rate of each tree level from the class whose highest link it is."""
    x = np.array([classes[c].links_crossed for c in CLASSES], dtype=float)
    y = np.array([classes[c].one_way_us_min for c in CLASSES])
    slope, intercept = np.polyfit(x, y, 1)
    if slope <= 0:  # links add nothing measurable (veth hops): all of it is overhead
        slope, intercept = 0.0, float(np.mean(y))
    return Calibration(
        classes=classes,
        overhead_us=float(max(intercept, 0.0)),
        link_latency_us=float(slope),
        rate_bit_s={TOP_LEVEL[c]: classes[c].rate_bit_s for c in CLASSES},
        gamma_ns_per_byte=float(np.median([classes[c].reduce_ns_per_byte for c in CLASSES])),
        settings=settings,
    )


def run_calibration(
    topo: Topology, workdir: Path, settings: CalibrationSettings | None = None
) -> Calibration:
    s = settings or CalibrationSettings()
    workdir.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o755)
    load = os.getloadavg()[0]
    pairs = calibration_pairs(topo)
    measured = {c: _measure_pair(c, nodes, workdir, s) for c, nodes in pairs.items()}
    return replace(derive(measured, s), host_load_1m=(load + os.getloadavg()[0]) / 2)
