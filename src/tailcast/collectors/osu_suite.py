"""The OSU Micro-Benchmarks suite as tailcast knows it: one entry per benchmark binary of
OMB 7.4 (`c/mpi/**`, names as `make install` puts them under
`libexec/osu-micro-benchmarks/mpi/`) and the OMB-Py benchmarks (`python/run.py
--benchmark NAME`).

For each benchmark: where the binary lives, what it measures (latency, bandwidth, message
rate, start-up time), how many processes it accepts, and — for the ones whose loop the agent
samples per iteration — which MPI call each iteration times (read from the OMB 7.4 sources:
e.g. osu_bcast.c times `MPI_Bcast` between two `MPI_Wtime` calls, osu_ibcast.c's first loop
times `MPI_Ibcast` + `MPI_Wait`, osu_latency.c one `MPI_Send`/`MPI_Recv` round trip, osu_bw.c
a window of `MPI_Isend`s, their `MPI_Waitall` and the 1-byte acknowledgement `MPI_Recv`).
"""

from __future__ import annotations

from dataclasses import dataclass

# What a benchmark's loop looks like, as the per-iteration sampler reads it.
BLOCKING = "blocking"  # collective: t(call) per iteration
NONBLOCKING = "nonblocking"  # collective: I-call … MPI_Wait per iteration (pure comm. loop)
PT2PT_LATENCY = "pt2pt-latency"  # ping-pong between ranks 0 and 1
PT2PT_BANDWIDTH = "pt2pt-bandwidth"  # windows of non-blocking sends, one ack per window
OTHER = "other"  # measured by OSU only (one-sided, multi-pair, start-up, persistent)

LATENCY = "latency"
BANDWIDTH = "bandwidth"
MESSAGE_RATE = "message_rate"
STARTUP = "startup"


@dataclass(frozen=True)
class OsuBenchmark:
    name: str  # tailcast's name: the binary without "osu_" (e.g. "ibcast", "put_latency")
    subdir: str  # under libexec/osu-micro-benchmarks/mpi (and c/mpi in a build tree)
    loop: str  # BLOCKING | NONBLOCKING | PT2PT_LATENCY | PT2PT_BANDWIDTH | OTHER
    metric: str  # LATENCY | BANDWIDTH | MESSAGE_RATE | STARTUP
    call: str | None = None  # the MPI call each timed iteration makes (samplable loops)
    ranks: str = "2+"  # "2" exactly two, "2+" at least two, "even" an even count ≥ 2
    sized: bool = True  # takes -m (barriers and start-up tests do not)

    @property
    def binary(self) -> str:
        return f"osu_{self.name}"

    @property
    def collective(self) -> bool:
        return self.subdir == "collective"

    @property
    def pattern(self) -> str:
        """The communication pattern, in the words of agent.builtin.PATTERNS."""
        if not self.collective:
            return {"one-sided": "one-sided", "startup": "startup"}.get(
                self.subdir, "point-to-point"
            )
        base = self.name.removesuffix("_persistent")
        base = base[1:] if self.loop == NONBLOCKING else base
        if base.startswith("neighbor_"):
            return "neighbourhood"
        return _ROOTED.get(base, "all-to-all")

    def ranks_for(self, available: int) -> int:
        """The process count to start on `available` slots (pt2pt pairs use two)."""
        if self.ranks == "2":
            return 2
        if self.ranks == "even":
            return max(2, available - available % 2)
        return available


_ROOTED = {
    "bcast": "one-to-all",
    "scatter": "one-to-all",
    "scatterv": "one-to-all",
    "reduce": "all-to-one",
    "gather": "all-to-one",
    "gatherv": "all-to-one",
    "barrier": "synchronisation",
}


def _blocking(name: str, call: str, sized: bool = True) -> OsuBenchmark:
    return OsuBenchmark(name, "collective", BLOCKING, LATENCY, call, sized=sized)


def _nonblocking(name: str, call: str, sized: bool = True) -> OsuBenchmark:
    return OsuBenchmark(name, "collective", NONBLOCKING, LATENCY, call, sized=sized)


_BLOCKING = {
    "allgather": "MPI_Allgather",
    "allgatherv": "MPI_Allgatherv",
    "allreduce": "MPI_Allreduce",
    "alltoall": "MPI_Alltoall",
    "alltoallv": "MPI_Alltoallv",
    "alltoallw": "MPI_Alltoallw",
    "bcast": "MPI_Bcast",
    "gather": "MPI_Gather",
    "gatherv": "MPI_Gatherv",
    "reduce": "MPI_Reduce",
    "reduce_scatter": "MPI_Reduce_scatter",
    "reduce_scatter_block": "MPI_Reduce_scatter_block",
    "scatter": "MPI_Scatter",
    "scatterv": "MPI_Scatterv",
    "neighbor_allgather": "MPI_Neighbor_allgather",
    "neighbor_allgatherv": "MPI_Neighbor_allgatherv",
    "neighbor_alltoall": "MPI_Neighbor_alltoall",
    "neighbor_alltoallv": "MPI_Neighbor_alltoallv",
    "neighbor_alltoallw": "MPI_Neighbor_alltoallw",
}

SUITE: dict[str, OsuBenchmark] = {
    **{n: _blocking(n, c) for n, c in _BLOCKING.items()},
    "barrier": _blocking("barrier", "MPI_Barrier", sized=False),
    # MPI_Ibcast, MPI_Ineighbor_allgather, ...: the blocking name with an I
    **{f"i{n}": _nonblocking(f"i{n}", "MPI_I" + c[4:].lower()) for n, c in _BLOCKING.items()},
    "ibarrier": _nonblocking("ibarrier", "MPI_Ibarrier", sized=False),
    # point to point (c/mpi/pt2pt/standard, persistent, congestion)
    "latency": OsuBenchmark("latency", "pt2pt", PT2PT_LATENCY, LATENCY, "MPI_Send", "2"),
    "bw": OsuBenchmark("bw", "pt2pt", PT2PT_BANDWIDTH, BANDWIDTH, "MPI_Isend", "2"),
    "bibw": OsuBenchmark("bibw", "pt2pt", OTHER, BANDWIDTH, ranks="2"),
    "latency_mp": OsuBenchmark("latency_mp", "pt2pt", OTHER, LATENCY, ranks="2"),
    "latency_mt": OsuBenchmark("latency_mt", "pt2pt", OTHER, LATENCY, ranks="2"),
    "multi_lat": OsuBenchmark("multi_lat", "pt2pt", OTHER, LATENCY, ranks="even"),
    "mbw_mr": OsuBenchmark("mbw_mr", "pt2pt", OTHER, BANDWIDTH, ranks="even"),
    "latency_persistent": OsuBenchmark(
        "latency_persistent", "pt2pt/persistent", OTHER, LATENCY, ranks="2"
    ),
    "bw_persistent": OsuBenchmark("bw_persistent", "pt2pt/persistent", OTHER, BANDWIDTH, ranks="2"),
    "bibw_persistent": OsuBenchmark(
        "bibw_persistent", "pt2pt/persistent", OTHER, BANDWIDTH, ranks="2"
    ),
    "bw_fan_in": OsuBenchmark("bw_fan_in", "congestion", OTHER, BANDWIDTH),
    "bw_fan_out": OsuBenchmark("bw_fan_out", "congestion", OTHER, BANDWIDTH),
    # one-sided (c/mpi/one-sided)
    **{
        n: OsuBenchmark(n, "one-sided", OTHER, LATENCY, ranks="2")
        for n in (
            "acc_latency",
            "cas_latency",
            "fop_latency",
            "get_acc_latency",
            "get_latency",
            "put_latency",
        )
    },
    **{
        n: OsuBenchmark(n, "one-sided", OTHER, BANDWIDTH, ranks="2")
        for n in ("get_bw", "put_bw", "put_bibw")
    },
    # start-up (c/mpi/startup)
    "init": OsuBenchmark("init", "startup", OTHER, STARTUP, sized=False),
    "hello": OsuBenchmark("hello", "startup", OTHER, STARTUP, sized=False),
}

# MPI-4 persistent collectives (c/mpi/collective/persistent): built only against an MPI-4
# library (Open MPI ≥ 5, MPICH ≥ 4); their outputs have the blocking collectives' format.
PERSISTENT_COLLECTIVES = tuple(
    f"{n}_persistent"
    for n in (
        "allgather",
        "allgatherv",
        "allreduce",
        "alltoall",
        "alltoallv",
        "alltoallw",
        "barrier",
        "bcast",
        "gather",
        "gatherv",
        "reduce",
        "reduce_scatter",
        "scatter",
        "scatterv",
    )
)
SUITE.update(
    (n, OsuBenchmark(n, "collective", OTHER, LATENCY, sized=n != "barrier_persistent"))
    for n in PERSISTENT_COLLECTIVES
)

# OMB-Py (python/run.py --benchmark NAME), 7.4's list.
OMB_PY = (
    "allgather",
    "allgatherv",
    "allreduce",
    "alltoall",
    "alltoallv",
    "barrier",
    "bcast",
    "gather",
    "gatherv",
    "reduce",
    "reduce_scatter",
    "scatter",
    "scatterv",
    "bw",
    "bibw",
    "latency",
    "multi_lat",
)

COLLECTIVES = tuple(n for n, b in SUITE.items() if b.loop in (BLOCKING, NONBLOCKING))
SAMPLED = tuple(n for n, b in SUITE.items() if b.loop != OTHER)


def benchmark(name: str) -> OsuBenchmark:
    """The suite entry for `name` ("bcast" or "osu_bcast"); KeyError lists the names."""
    key = name.removeprefix("osu_")
    try:
        return SUITE[key]
    except KeyError:
        raise KeyError(f"no OSU benchmark {name!r}; known: {', '.join(SUITE)}") from None
