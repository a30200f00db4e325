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
    if RANKS > 0.0410 / 1024 * size + 9.7128:
        return KIB
    if RANKS > 0.0033 / 1024 * size + 1.6761:
        return 32 * KIB
    return 64 * KIB


def _reduce_binomial_segsize(size: int) -> int:
    """reduce-ompi.cpp reduce__ompi_binomial: 0 below 2 KiB, 1 KiB when p is above its line."""
    if size < 2048 or size <= 1:
        return 0
    return KIB if RANKS > 0.6016 / 1024 * size + 1.3496 else 0


def _fixed(text: str) -> Callable[[int], str]:
    return lambda _size: text


@dataclass(frozen=True)
class Pair:
    kind: str
    algorithm: str  # tailcast's (= Open MPI's) name
    ompi_id: int
    simgrid: str  # the value of SimGrid's smpi/<kind> setting
    params: Callable[[int], str] = _fixed("")
    # why the pair differs, per size ("*" = every size); only reported when it does differ
    reasons: dict[str, str] = field(default_factory=dict)

    def tailcast_coll(self, size: int) -> str:
        extra = self.params(size)
        return f"{self.kind}={self.algorithm}" + (f":{extra}" if extra else "")


PAIRS: list[Pair] = [
    Pair("bcast", "linear", 1, "NTSL"),
    Pair("bcast", "chain", 2, "ompi_pipeline", _fixed("segsize=128K")),
    Pair("bcast", "pipeline", 3, "ompi_pipeline",
         lambda s: f"segsize={_bcast_pipeline_segsize(s)}"),  # fmt: skip
    Pair("bcast", "split_binary", 4, "ompi_split_bintree",
         lambda s: "segsize=1K" if s < 370728 else "segsize=8K"),  # fmt: skip
    Pair("bcast", "binary", 5, "NTSB", _fixed("segsize=8K")),
    Pair("bcast", "binomial", 6, "binomial_tree"),
    Pair("bcast", "knomial", 7, "mvapich2_knomial_intra_node"),
    Pair("bcast", "scatter_allgather", 8, "scatter_rdb_allgather"),
    Pair("bcast", "scatter_allgather_ring", 9, "scatter_LR_allgather"),
    Pair("reduce", "linear", 1, "ompi_basic_linear"),
    Pair("reduce", "chain", 2, "ompi_chain", _fixed(f"segsize=64K:fanout={RANKS // 2}")),
    Pair("reduce", "pipeline", 3, "ompi_pipeline",
         lambda s: f"segsize={_reduce_pipeline_segsize(s)}"),  # fmt: skip
    Pair("reduce", "binary", 4, "ompi_binary", _fixed("segsize=32K")),
    Pair("reduce", "binomial", 5, "ompi_binomial",
         lambda s: f"segsize={_reduce_binomial_segsize(s)}"),  # fmt: skip
    Pair("reduce", "in_order_binary", 6, "ompi_in_order_binary"),
    Pair("reduce", "rabenseifner", 7, "ompi_basic_linear"),
    Pair("allreduce", "linear", 1, "redbcast"),
    Pair("allreduce", "nonoverlapping", 2, "redbcast"),
    Pair("allreduce", "recursive_doubling", 3, "rdb"),
    Pair("allreduce", "ring", 4, "lr"),
    Pair("allreduce", "segmented_ring", 5, "ompi_ring_segmented", _fixed("segsize=1M")),
    Pair("allreduce", "rabenseifner", 6, "rab_rdb"),
    Pair("alltoall", "linear", 1, "basic_linear"),
    Pair("alltoall", "pairwise", 2, "pair"),
    Pair("alltoall", "bruck", 3, "bruck"),
    Pair("alltoall", "linear_sync", 4, "basic_linear"),
    Pair("allgather", "linear", 1, "NTSLR_NB"),
    Pair("allgather", "bruck", 2, "bruck"),
    Pair("allgather", "recursive_doubling", 3, "rdb"),
    Pair("allgather", "ring", 4, "ring"),
    Pair("allgather", "neighbor_exchange", 5, "ompi_neighborexchange"),
    Pair("gather", "linear", 1, "ompi_basic_linear"),
    Pair("gather", "binomial", 2, "ompi_binomial"),
    Pair("gather", "linear_sync", 3, "ompi_linear_sync",
         lambda s: "segsize=32K" if s > 92160 else "segsize=1K"),  # fmt: skip
    Pair("scatter", "linear", 1, "ompi_basic_linear"),
    Pair("scatter", "binomial", 2, "ompi_binomial"),
    Pair("scatter", "linear_nb", 3, "ompi_linear_nb"),
]
# Not paired: alltoall two_proc (id 5) and allgather two_proc (id 6) are defined for 2 ranks
# only (4.1.4 falls back at p != 2; SimGrid maps them to basic_linear / pair).


def reason_for(pair: Pair, size: int, failure: str) -> str:
    """The documented reason for a pair off by more than 5 %, '' when none is known."""
    text = pair.reasons.get(str(size)) or pair.reasons.get("*") or ""
    if failure:
        return f"SimGrid failed ({failure})" + (f": {text}" if text else "")
    return text
