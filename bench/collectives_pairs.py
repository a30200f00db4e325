"""The pairs of bench/collectives_bench.py: each Open MPI 4.1 coll/tuned algorithm (id order of
coll_tuned_<kind>_algorithm) beside the SimGrid 3.32 function that SimGrid's Open MPI selector
runs for that id (src/smpi/colls/smpi_openmpi_selector.cpp, `funcs[]` of `<kind>__ompi`), the
segment size / fanout SimGrid's port fixes for itself (given to tailcast so both run one
program), and the reasons, read in both sources, for the pairs that differ by more than 5 %.

Sources: Open MPI v4.1.4 ompi/mca/coll/base/coll_base_<kind>.c (github:open-mpi/ompi, tag
v4.1.4) and SimGrid v3.32 src/smpi/colls/<kind>/*.cpp (github:simgrid/simgrid, tag v3.32).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

KIB = 1024
SIZES = (8, 64 * KIB, 1024 * KIB)
RANKS = 16


def _bcast_pipeline_segsize(size: int) -> int:
    """bcast-ompi-pipeline.cpp: 128 KiB unless p is below one of its fitted lines (at p = 16
    none of 8 B .. 1 MiB is: 16 > a_p16 * 1 MiB + b_p16 = 12.2)."""
    a_p16, b_p16 = 3.2118e-6, 8.7936
    a_p64, b_p64 = 2.3679e-6, 1.1787
    a_p128, b_p128 = 1.6134e-6, 2.1102
    if a_p128 * size + b_p128 > RANKS:
        return 128 * KIB
    if a_p64 * size + b_p64 > RANKS:
        return 64 * KIB
    if a_p16 * size + b_p16 > RANKS:
        return 16 * KIB
    return 128 * KIB


def _reduce_pipeline_segsize(size: int) -> int:
    """reduce-ompi.cpp reduce__ompi_pipeline: 1 KiB, 32 KiB or 64 KiB by two fitted lines."""
    if 0.0410 / 1024 * size + 9.7128 < RANKS:
        return KIB
    if 0.0033 / 1024 * size + 1.6761 < RANKS:
        return 32 * KIB
    return 64 * KIB


def _reduce_binomial_segsize(size: int) -> int:
    """reduce-ompi.cpp reduce__ompi_binomial: 0 below 2 KiB, 1 KiB when p is above its line."""
    if size < 2048 or size <= 1:
        return 0
    return KIB if 0.6016 / 1024 * size + 1.3496 < RANKS else 0


SG = "SimGrid v3.32 src/smpi/colls/"
OMPI = "Open MPI v4.1.4 ompi/mca/coll/base/"
SMP_ABORT = (
    "calls Comm::init_smp() (SimGrid src/smpi/mpi/smpi_comm.cpp:398, a 'hack' that switches "
    "replay off to copy real buffers), and smpireplaymain aborts with 'free(): invalid pointer'"
)
KNOMIAL_AT_8B = (
    "SimGrid's ompi bcast decision at p = 16 and < 4096 B picks algorithm 7 "
    f"({SG}smpi_openmpi_selector.cpp:531-533), whose port bcast__mvapich2_knomial_intra_node "
    f"{SMP_ABORT}; `smpi/bcast:ompi` alone at 8 B aborts the same way"
)
REDBCAST = (
    f"SimGrid runs allreduce__redbcast ({SG}smpi_openmpi_selector.cpp:23-24 for ids 1 and 2; "
    "allreduce-redbcast.cpp: colls::reduce then colls::bcast, i.e. SimGrid's ompi decisions)"
)
ENVELOPE_FALLBACK = (
    "both sides run linear here (4.1.4 falls back at count < pof2); the gap is 15 x SimGrid's "
    "16-byte envelope on the root's link (smpi_request.cpp:617), as in the reduce linear 8 B row"
)


def _fixed(text: str) -> Callable[[int], str]:
    return lambda _size: text


def _none(_size: int) -> str:
    return ""


def _bcast_pipeline(size: int) -> str:
    return f"segsize={_bcast_pipeline_segsize(size)}"


def _split_bintree(size: int) -> str:
    """bcast-ompi-split-bintree.cpp: 1 KiB segments below 370728 B, 8 KiB above."""
    return "segsize=1K" if size < 370728 else "segsize=8K"


def _reduce_pipeline(size: int) -> str:
    return f"segsize={_reduce_pipeline_segsize(size)}"


def _reduce_binomial(size: int) -> str:
    return f"segsize={_reduce_binomial_segsize(size)}"


def _gather_linear_sync(size: int) -> str:
    """gather-ompi.cpp gather__ompi_linear_sync: first segment 32 KiB above 92160 B, else 1 KiB."""
    return "segsize=32K" if size > 92160 else "segsize=1K"


@dataclass(frozen=True)
class Pair:
    kind: str
    algorithm: str  # tailcast's (= Open MPI's) name
    ompi_id: int
    simgrid: str  # the value of SimGrid's smpi/<kind> setting
    params: Callable[[int], str] = _none
    # why the pair differs, per size ("*" = every size); only reported when it does differ
    reasons: dict[str, str] = field(default_factory=dict)

    def tailcast_coll(self, size: int) -> str:
        extra = self.params(size)
        return f"{self.kind}={self.algorithm}" + (f":{extra}" if extra else "")


PAIRS: list[Pair] = [
    Pair(
        "bcast",
        "linear",
        1,
        "NTSL",
        reasons={
            "8": f"SimGrid's port for id 1 is bcast__NTSL ({SG}smpi_openmpi_selector.cpp:460), a "
            "chain (rank+1) of 8 KiB segments (bcast-NTSL.cpp:9,30), not 4.1.4's "
            f"ompi_coll_base_bcast_intra_basic_linear ({OMPI}coll_base_bcast.c:628-670: the "
            "root isends to every rank at once): 15 hops of 0.2 us against one; at 64 KiB and "
            "1 MiB the root's link bounds both (15 x n/B) and they agree"
        },
    ),
    Pair(
        "bcast",
        "chain",
        2,
        "ompi_pipeline",
        _fixed("segsize=128K"),
        reasons={
            "*": f"SimGrid maps id 2 (chain) to bcast__ompi_pipeline ({SG}"
            "smpi_openmpi_selector.cpp:461), one chain (build_chain(1), "
            "bcast-ompi-pipeline.cpp:27);"
            f" 4.1.4's ompi_coll_base_bcast_intra_chain ({OMPI}coll_base_bcast.c:305) builds "
            "coll_tuned_bcast_algorithm_chain_fanout = 4 chains, which tailcast runs: shorter "
            "chains win at 8 B / 64 KiB, the root feeding 4 chains loses at 1 MiB. The same "
            "program (the pipeline pair, fanout 1) agrees within 5 % at 8 B and 1 MiB"
        },
    ),
    Pair("bcast", "pipeline", 3, "ompi_pipeline", _bcast_pipeline),
    Pair(
        "bcast",
        "split_binary",
        4,
        "ompi_split_bintree",
        _split_bintree,
        reasons={
            "8": f"SimGrid failure: at 8 B its port falls back to bcast__SMP_linear ({SG}"
            f"bcast/bcast-ompi-split-bintree.cpp:129-134), which (bcast-SMP-linear.cpp:26) "
            f"{SMP_ABORT}; `smpi/bcast:SMP_linear` alone aborts the same way. 4.1.4 falls back to "
            f"a chain of fanout 1 there ({OMPI}coll_base_bcast.c:417-424), which tailcast runs "
            "(3.01 us = 15 hops, equal to the bcast pipeline pair at 8 B)"
        },
    ),
    Pair("bcast", "binary", 5, "NTSB", _fixed("segsize=8K")),
    Pair(
        "bcast",
        "binomial",
        6,
        "binomial_tree",
        reasons={
            "*": f"SimGrid's port for id 6 is bcast__binomial_tree ({SG}smpi_openmpi_selector.cpp:"
            "465), MPICH's binomial with one blocking send per child "
            "(bcast-binomial-tree.cpp:101): "
            "4 message times on the critical path. 4.1.4's binomial is "
            f"ompi_coll_base_bcast_intra_generic ({OMPI}coll_base_bcast.c:84-99): per segment the "
            "root isends to all its children, then waits for all; with one segment (forced "
            "segsize 0) the root's 4 sends share its link and all end at 4 n/B, the next level "
            "at 4+3, ...: (4+3+2+1) n/B + 4 hops, what tailcast gives (54.83 us at 64 KiB = "
            "10 x 5.243 + 4 x 0.2 + 4 handshakes x 0.4). tailcast follows 4.1.4"
        },
    ),
    Pair(
        "bcast",
        "knomial",
        7,
        "mvapich2_knomial_intra_node",
        reasons={
            "*": f"SimGrid failure at every size: its port for id 7 is "
            f"bcast__mvapich2_knomial_intra_node ({SG}smpi_openmpi_selector.cpp:466), which "
            f"(bcast/bcast-mvapich-smp.cpp:188-190) {SMP_ABORT}. It is MVAPICH2's intra-node "
            f"k-nomial, not 4.1.4's ompi_coll_base_bcast_intra_knomial ({OMPI}coll_base_bcast.c:"
            "720), which tailcast runs (radix 4)"
        },
    ),
    Pair(
        "bcast",
        "scatter_allgather",
        8,
        "scatter_rdb_allgather",
        reasons={
            "8": f"4.1.4 falls back to basic_linear when count < comm_size ({OMPI}"
            "coll_base_bcast.c:794-800; 8 elements < 16), which tailcast runs (0.21 us); "
            f"SimGrid's port is MPICH's bcast__scatter_rdb_allgather ({SG}"
            "smpi_openmpi_selector.cpp:467) and has no such fallback"
        },
    ),
    Pair(
        "bcast",
        "scatter_allgather_ring",
        9,
        "scatter_LR_allgather",
        reasons={
            "8": f"4.1.4 falls back to basic_linear when count < comm_size ({OMPI}"
            "coll_base_bcast.c:971-977; 8 elements < 16), which tailcast runs (0.21 us); "
            f"SimGrid's port is MPICH's bcast__scatter_LR_allgather ({SG}"
            "smpi_openmpi_selector.cpp:468) and has no such fallback"
        },
    ),
    Pair("reduce", "linear", 1, "ompi_basic_linear"),
    Pair("reduce", "chain", 2, "ompi_chain", _fixed(f"segsize=64K:fanout={RANKS // 2}")),
    Pair("reduce", "pipeline", 3, "ompi_pipeline", _reduce_pipeline),
    Pair("reduce", "binary", 4, "ompi_binary", _fixed("segsize=32K")),
    Pair("reduce", "binomial", 5, "ompi_binomial", _reduce_binomial),
    Pair("reduce", "in_order_binary", 6, "ompi_in_order_binary"),
    Pair(
        "reduce",
        "rabenseifner",
        7,
        "ompi_basic_linear",
        reasons={
            "8": ENVELOPE_FALLBACK,
            "*": f"SimGrid's selector runs reduce__ompi_basic_linear for id 7 ({SG}"
            "smpi_openmpi_selector.cpp:611-612, 'our rab can't be used with all datatypes'); "
            f"tailcast runs 4.1.4's ompi_coll_base_reduce_intra_redscat_gather ({OMPI}"
            "coll_base_reduce.c:795): reduce-scatter by recursive halving + binomial gather",
        },
    ),
    Pair(
        "allreduce",
        "linear",
        1,
        "redbcast",
        reasons={
            "8": f"SimGrid failure: {REDBCAST}; its bcast at 8 B: {KNOMIAL_AT_8B}",
            "*": f"{REDBCAST}, at 64 KiB / 1 MiB a segmented reduce and bcast; 4.1.4's "
            f"allreduce basic_linear ({OMPI}coll_base_allreduce.c:881-911) is reduce "
            "basic_linear (15 messages into the root) then bcast basic_linear (15 out): "
            "about 2 x 15 n/B through the root's link (157.3 us at 64 KiB, 2516.6 us at 1 MiB; "
            "tailcast adds the per-message latency and handshakes)",
        },
    ),
    Pair(
        "allreduce",
        "nonoverlapping",
        2,
        "redbcast",
        reasons={
            "8": f"SimGrid failure: {REDBCAST}; its bcast at 8 B: {KNOMIAL_AT_8B}",
            "*": f"{REDBCAST}; 4.1.4's nonoverlapping ({OMPI}coll_base_allreduce.c:54-80) is the "
            "communicator's reduce then bcast (coll/tuned fixed decisions), the same shape: both "
            "pick a binomial bcast at 64 KiB, p = 16, and the gap is the bcast binomial pair's "
            "(SimGrid's MPICH blocking-send binomial vs 4.1.4's isend-to-all-children, see that "
            "row)",
        },
    ),
    Pair("allreduce", "recursive_doubling", 3, "rdb"),
    Pair(
        "allreduce",
        "ring",
        4,
        "lr",
        reasons={
            "8": f"SimGrid failure: allreduce__lr falls back to redbcast when count < p ({SG}"
            f"allreduce/allreduce-lr.cpp:38-41), whose bcast at 8 B: {KNOMIAL_AT_8B}. 4.1.4's "
            f"ring falls back to recursive doubling there ({OMPI}coll_base_allreduce.c:371-373), "
            "which tailcast runs (0.80 us, equal to the recursive_doubling pair)"
        },
    ),
    Pair(
        "allreduce",
        "segmented_ring",
        5,
        "ompi_ring_segmented",
        _fixed("segsize=1M"),
        reasons={
            "8": f"SimGrid failure: its port switches to allreduce__lr when count < p x segcount "
            f"({SG}allreduce/allreduce-ompi-ring-segmented.cpp:203-206), which falls back to "
            f"redbcast at count < p (allreduce-lr.cpp:38-41), whose bcast at 8 B: {KNOMIAL_AT_8B}"
        },
    ),
    Pair(
        "allreduce",
        "rabenseifner",
        6,
        "rab_rdb",
        reasons={
            "8": f"4.1.4's redscat_allgather falls back to basic_linear when count < pof2 ({OMPI}"
            "coll_base_allreduce.c:987-994; 8 < 16), which tailcast runs (0.42 us = 2 x 0.21); "
            f"SimGrid's port allreduce__rab_rdb ({SG}smpi_openmpi_selector.cpp:28) has no such "
            "fallback"
        },
    ),
    Pair("alltoall", "linear", 1, "basic_linear"),
    Pair("alltoall", "pairwise", 2, "pair"),
    Pair("alltoall", "bruck", 3, "bruck"),
    Pair("alltoall", "linear_sync", 4, "basic_linear"),
    Pair(
        "allgather",
        "linear",
        1,
        "NTSLR_NB",
        reasons={
            "*": f"SimGrid's port for id 1 is allgather__NTSLR_NB ({SG}smpi_openmpi_selector.cpp:"
            "911), a non-blocking logical ring (allgather-NTSLR-NB.cpp:54-61: p-1 steps of one "
            f"block); 4.1.4's allgather basic_linear ({OMPI}coll_base_allgather.c:681-718) is the "
            "communicator's gather to rank 0 then bcast of p blocks (coll/tuned decisions), "
            "which tailcast runs: the root's link carries 15 blocks in and a 16-block bcast out"
        },
    ),
    Pair("allgather", "bruck", 2, "bruck"),
    Pair("allgather", "recursive_doubling", 3, "rdb"),
    Pair("allgather", "ring", 4, "ring"),
    Pair("allgather", "neighbor_exchange", 5, "ompi_neighborexchange"),
    Pair("gather", "linear", 1, "ompi_basic_linear"),
    Pair("gather", "binomial", 2, "ompi_binomial"),
    Pair("gather", "linear_sync", 3, "ompi_linear_sync", _gather_linear_sync),
    Pair("scatter", "linear", 1, "ompi_basic_linear"),
    Pair(
        "scatter",
        "binomial",
        2,
        "ompi_binomial",
        reasons={
            "*": f"send order: 4.1.4 sends to the children from the last ({OMPI}"
            "coll_base_scatter.c:171, `for (i = tree_nextsize - 1; i >= 0; i--)`: largest "
            "subtree first, so it forwards while the root still sends), tailcast too: 15 blocks "
            f"through the root's link (1260.7 us = 15 x 83.9 us at 1 MiB); SimGrid's port ({SG}"
            "scatter/scatter-ompi.cpp:144, `for (i = 0; i < tree_nextsize; i++)`) sends the "
            "smallest subtree first, so the 8-rank subtree starts last. tailcast follows 4.1.4"
        },
    ),
    Pair("scatter", "linear_nb", 3, "ompi_linear_nb"),
]
# Not paired: alltoall two_proc (id 5) and allgather two_proc (id 6) are defined for 2 ranks
# only (4.1.4 falls back at p != 2; SimGrid maps them to basic_linear / pair).


def reason_for(pair: Pair, size: int) -> str:
    """The documented reason for a pair off by more than 5 %, '' when none is known."""
    return pair.reasons.get(str(size)) or pair.reasons.get("*") or ""
