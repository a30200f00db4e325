"""Speed of tailcast's packet engine beside BookSim2 (issue 39: exact mode >= 20 M packet-hops
per CPU-second on `dfp-8k`, uniform random traffic at 0.5 load).

tailcast's side: crates/replay-engine/examples/packet_speed.rs, built here with
`cargo build --profile demo` and its binary run directly: single-packet messages (4096 B),
Poisson arrivals at 0.5 of every endpoint's injection rate, uniform random destinations, on
dfp-8k switched to `contention = "packet"` (CODES dfp_8k: 8448 hosts, 1056 routers, adaptive
routing, 2 VCs of 8192 B). Its packet-hops are the engine's `packet_hops` stat: one per link
a packet crosses, the host's injection and ejection links included.

BookSim2's side (git 28f4329, built from ../shared/third_party by scripts/build-third-party
booksim): its canonical `dragonflynew` topology (src/networks/dragonfly.cpp) has one knob, k =
p = hosts per router = global links per router, with a = 2p routers per group and g = a p + 1
groups. No k gives 8448 hosts: k = 7 gives 9702 (99 groups x 14 routers x 7 hosts, 1386
routers, +15 % hosts, +31 % routers), k = 6 gives 5256 (-38 %); k = 7 is used. Uniform
traffic, Bernoulli injection at 0.5 flit per cycle per host (every channel carries one flit
per cycle, so 0.5 of injection as on dfp-8k), single-flit packets (one flit = one packet, so
a flit-hop is a packet-hop; the cheapest packet for BookSim, which simulates every flit),
UGAL routing (`ugal_dragonflynew`, 3 VCs: the adaptive counterpart of dfp-8k's), and the
router of BookSim's own runfiles/dragonflyconfig (input-queued, iSLIP allocators, 256-flit
VC buffers, speedup 1.7). Its channels take 1 cycle from hosts, 10 within a group and 100
between groups (DRAGON_LATENCY, compiled into dragonfly.cpp); dfp-8k has no cable latency
and a 100 ns router delay. BookSim's `Hops average` counts routers a packet crosses
(f->hops++ at switch traversal, src/routers/iq_router.cpp), so its link-hops per packet are
that + 1, the unit tailcast counts. Packets: every one injected is delivered (BookSim drains
the network before it ends, src/trafficmanager.cpp Run), so packets = the injected packet
rate (per host per cycle, measured over the sample periods) x hosts x injection cycles
((warmup_periods + 3) x sample_period: sim_type = throughput with acc_stopping_thres < 0
stops after exactly 3 measured periods, trafficmanager.cpp _SingleSim).

Both simulate the same span of traffic, LENGTH_PACKET_TIMES transmission times of one packet
per host (BookSim: cycles; dfp-8k: 4096 B at 25 GiB/s = 153 ns each), stretched for either
simulator until a run takes >= MIN_CPU_S; the network's fill and drain are in both runs.
Figures are whole-process CPU seconds (user + sys by wait4, child_usage.py), building the
network included; tailcast's example also prints its simulation loop's own figure, recorded
beside. The VM's speed drifts by tens of percent, so the two alternate ROUNDS times and the
ratio is that of the medians; every round is recorded.

`make bench` calls `run()` (bench/results/packet_speed.json); alone: .venv/bin/python
bench/run.py packet_speed
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from child_usage import run_measured

REPO = Path(__file__).resolve().parents[1]
FABRIC = "dfp-8k"
LOAD = 0.5
GOAL_HOPS_PER_CPU_S = 20e6  # issue 39
ROUNDS = 3
MIN_CPU_S = 5.0
LENGTH_PACKET_TIMES = 400
SEED = 1
CARGO_PROFILE = "demo"  # the example's documented build (Cargo.toml: release without LTO)

BOOKSIM_K = 7
BOOKSIM_WARMUP_PERIODS = 1
BOOKSIM_MEASURED_PERIODS = 3  # _SingleSim stops after 3 converged periods
# src/booksim_config.cpp names every key; the router block is runfiles/dragonflyconfig's.
BOOKSIM_CONFIG = """\
topology = dragonflynew;
k = {k};
n = 1;
routing_function = ugal;
num_vcs = 3;
vc_buf_size = 256;
wait_for_tail_credit = 0;
vc_allocator = islip;
sw_allocator = islip;
alloc_iters = 4;
credit_delay = 2;
routing_delay = 0;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
input_speedup = 1;
output_speedup = 1;
internal_speedup = 1.7;
priority = none;
traffic = uniform;
injection_process = bernoulli;
injection_rate = {load};
injection_rate_uses_flits = 1;
packet_size = 1;
sim_type = throughput;
warmup_periods = {warmup};
sample_period = {period};
max_samples = {max_samples};
acc_stopping_thres = -1.0;
sim_count = 1;
seed = {seed};
"""


def dragonflynew_shape(k: int) -> dict[str, int]:
    """dragonflynew's sizes for k (DragonFlyNew::_ComputeSize): a = 2k routers per group,
    g = a k + 1 groups, k hosts and k global links per router."""
    routers_per_group = 2 * k
    groups = routers_per_group * k + 1
    return {
        "hosts": groups * routers_per_group * k,
        "routers": groups * routers_per_group,
        "groups": groups,
        "routers_per_group": routers_per_group,
        "hosts_per_router": k,
        "global_links_per_router": k,
    }


def packet_time_us() -> float:
    """One packet's transmission time on a dfp-8k host link."""
    path = REPO / "src" / "tailcast" / "replay" / "fabrics" / f"{FABRIC}.toml"
    table = tomllib.loads(path.read_text())
    bits = table["packet_bytes"] * 8
    return float(bits / (table["terminal"]["bandwidth_gbps"] * 1e3))


def build_tailcast_example() -> Path:
    """The packet_speed example's binary, built with CARGO_PROFILE (cargo reports its path)."""
    argv = ["cargo", "build", "--profile", CARGO_PROFILE, "-p", "replay-engine"]
    argv += ["--example", "packet_speed", "--message-format", "json-render-diagnostics"]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "packet_speed":
            return Path(msg["executable"])
    raise RuntimeError("cargo build reported no packet_speed executable")


def build_booksim() -> Path:
    argv = [str(REPO / "scripts" / "build-third-party"), "booksim"]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=3600)
    return Path(done.stdout.strip())


TAILCAST_LINE = re.compile(
    r": (?P<hosts>\d+) endpoints, .*: (?P<packets>\d+) packets delivered, (?P<hops>\d+) "
    r"packet-hops in (?P<loop_cpu>[\d.]+) CPU-s"
)


def tailcast_run(binary: Path, length_us: float, work: Path) -> dict[str, Any]:
    run = run_measured([str(binary), FABRIC, str(LOAD), f"{length_us:.3f}", str(SEED)], work)
    found = TAILCAST_LINE.search(run.stdout)
    if not found:
        raise RuntimeError(f"packet_speed printed no figures: {run.stdout[-500:]}")
    hops = int(found["hops"])
    return {
        "simulated_us": round(length_us, 3),
        "packets": int(found["packets"]),
        "packet_hops": hops,
        "cpu_s": round(run.cpu_s, 3),
        "hops_per_cpu_s": round(hops / run.cpu_s),
        "loop_cpu_s": float(found["loop_cpu"]),
        "loop_hops_per_cpu_s": round(hops / float(found["loop_cpu"])),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
    }


def _overall(stdout: str, key: str) -> float:
    """A figure of BookSim's `Overall Traffic Statistics` block (trafficmanager.cpp
    DisplayOverallStats)."""
    block = stdout[stdout.index("====== Overall Traffic Statistics ======") :]
    found = re.search(rf"^{re.escape(key)} = ([\d.eE+-]+)", block, re.MULTILINE)
    if not found:
        raise RuntimeError(f"booksim printed no overall `{key}`")
    return float(found.group(1))


def booksim_run(binary: Path, period: int, work: Path) -> dict[str, Any]:
    periods = BOOKSIM_WARMUP_PERIODS + BOOKSIM_MEASURED_PERIODS
    config = work / "dragonfly.cfg"
    config.write_text(
        BOOKSIM_CONFIG.format(
            k=BOOKSIM_K,
            load=LOAD,
            warmup=BOOKSIM_WARMUP_PERIODS,
            period=period,
            max_samples=periods + 1,
            seed=SEED,
        )
    )
    # BookSim's main returns -1 when the simulation succeeded (src/main.cpp: `result ? -1 : 0`).
    run = run_measured([str(binary), str(config)], work, success=255)
    if "Simulation unstable" in run.stdout or "Time taken is" not in run.stdout:
        raise RuntimeError(f"booksim did not finish its periods: {run.stdout[-1000:]}")
    # One `Injected packet rate average` per class per sample period, before the overall block.
    ran = run.stdout.split("====== Overall")[0].count("Injected packet rate average")
    if ran != periods:
        raise RuntimeError(f"booksim ran {ran} sample periods, expected {periods}")
    hosts = dragonflynew_shape(BOOKSIM_K)["hosts"]
    injection_cycles = periods * period
    packets = _overall(run.stdout, "Injected packet rate average") * hosts * injection_cycles
    router_hops = _overall(run.stdout, "Hops average")
    link_hops = packets * (router_hops + 1)
    return {
        "injection_cycles": injection_cycles,
        "total_cycles": int(re.findall(r"Time taken is (\d+) cycles", run.stdout)[-1]),
        "packets": round(packets),
        "router_hops_per_packet": router_hops,
        "packet_hops": round(link_hops),
        "cpu_s": round(run.cpu_s, 3),
        "hops_per_cpu_s": round(link_hops / run.cpu_s),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
    }


def long_enough(
    measure: Callable[[float], dict[str, Any]], length: float, grain: float
) -> tuple[float, dict[str, Any]]:
    """The first length (from `length`, in multiples of `grain`) whose run takes at least
    MIN_CPU_S, and that run."""
    while True:
        sample = measure(length)
        if sample["cpu_s"] >= MIN_CPU_S:
            return length, sample
        stretch = 1.25 * MIN_CPU_S / max(sample["cpu_s"], 0.01)
        length = math.ceil(length * stretch / grain) * grain


def run() -> dict[str, Any]:
    tailcast_bin = build_tailcast_example()
    booksim_bin = build_booksim()
    periods = BOOKSIM_WARMUP_PERIODS + BOOKSIM_MEASURED_PERIODS
    with tempfile.TemporaryDirectory(prefix="tailcast-bench-packet-speed-") as tmp:
        work = Path(tmp)

        def tailcast(length: float) -> dict[str, Any]:
            return tailcast_run(tailcast_bin, length, work)

        def booksim(length: float) -> dict[str, Any]:
            return booksim_run(booksim_bin, round(length / periods), work)

        tail_len, first_tail = long_enough(
            tailcast, LENGTH_PACKET_TIMES * packet_time_us(), packet_time_us()
        )
        book_len, first_book = long_enough(booksim, LENGTH_PACKET_TIMES, periods)
        tail_runs, book_runs = [first_tail], [first_book]
        for row in (first_tail, first_book):
            print(json.dumps(row), file=sys.stderr, flush=True)
        for _ in range(ROUNDS - 1):
            tail_runs.append(tailcast(tail_len))
            book_runs.append(booksim(book_len))
            for row in (tail_runs[-1], book_runs[-1]):
                print(json.dumps(row), file=sys.stderr, flush=True)
    tail_median = statistics.median(r["hops_per_cpu_s"] for r in tail_runs)
    book_median = statistics.median(r["hops_per_cpu_s"] for r in book_runs)
    return {
        "load": LOAD,
        "rounds": ROUNDS,
        "tailcast": {
            "fabric": f"{FABRIC} (8448 hosts, 1056 routers), contention = packet",
            "binary": f"crates/replay-engine/examples/packet_speed.rs, cargo --profile "
            f"{CARGO_PROFILE}",
            "runs": tail_runs,
            "median_hops_per_cpu_s": round(tail_median),
            "median_loop_hops_per_cpu_s": round(
                statistics.median(r["loop_hops_per_cpu_s"] for r in tail_runs)
            ),
        },
        "booksim2": {
            "source": "booksim2-28f4329.tar.gz (scripts/build-third-party booksim)",
            "topology": {"name": "dragonflynew", "k": BOOKSIM_K, **dragonflynew_shape(BOOKSIM_K)},
            "config": BOOKSIM_CONFIG.format(
                k=BOOKSIM_K,
                load=LOAD,
                warmup=BOOKSIM_WARMUP_PERIODS,
                period=round(book_len / periods),
                max_samples=periods + 1,
                seed=SEED,
            ).splitlines(),
            "runs": book_runs,
            "median_hops_per_cpu_s": round(book_median),
        },
        "speed_ratio_tailcast_to_booksim": round(tail_median / book_median, 2),
        "goal_hops_per_cpu_s": GOAL_HOPS_PER_CPU_S,
        "meets_goal": tail_median >= GOAL_HOPS_PER_CPU_S,
        "notes": (
            "packet-hops = links a packet crosses, host injection and ejection links included "
            "(tailcast: the engine's packet_hops; BookSim: packets x (Hops average + 1), Hops "
            "average counting routers). hops_per_cpu_s: over the whole process's CPU time, "
            "network construction included; tailcast's loop_hops_per_cpu_s: over its "
            "simulation loop only (the example's own clock). Same traffic span in packet "
            "times per host unless a simulator needed more for MIN_CPU_S. BookSim differs "
            "from dfp-8k in: canonical dragonfly (one global link per group pair) instead of "
            "Dragonfly+ leaf/spine, 9702 instead of 8448 hosts (no dragonflynew k gives "
            "8448), UGAL instead of dfp-8k's adaptive rule, single-flit packets instead of "
            "4096 B, 3 VCs x 256 flits instead of 2 VCs x 8 packets (32 KiB), 10/100-cycle "
            "local/global channel latency instead of none, a cycle-driven router pipeline "
            "instead of events."
        ),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
