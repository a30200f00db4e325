"""Reader of the PMPI tracer's timing-mode files (TAILCAST_TRACE_MODE=timing,
tailcast_pmpi_timing.h): per rank, every MPI call's name, start and end (CLOCK_MONOTONIC ns)
and byte count, in call order.

File: the tracer's header of six int32 (magic "TACT", version 2, world rank, world size,
pid, record size 32), then records `<3q2i` (t_start, t_end, bytes; call code, reserved).
A rank that crashed may leave a partial last record: it is dropped and counted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tailcast.errors import InputError

# Same order as enum tm_call in tailcast_pmpi_timing.h.
CALLS: tuple[str, ...] = (
    "MPI_Init", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
    "MPI_Sendrecv", "MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome", "MPI_Test",
    "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce",
    "MPI_Allreduce", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Allgather",
    "MPI_Allgatherv", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Ialltoall",
    "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Iallgather", "MPI_Iallgatherv", "MPI_Igather",
    "MPI_Igatherv", "MPI_Iscatter", "MPI_Iscatterv", "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Neighbor_allgather", "MPI_Neighbor_allgatherv", "MPI_Neighbor_alltoall",
    "MPI_Neighbor_alltoallv", "MPI_Neighbor_alltoallw", "MPI_Ineighbor_allgather",
    "MPI_Ineighbor_allgatherv", "MPI_Ineighbor_alltoall", "MPI_Ineighbor_alltoallv",
    "MPI_Ineighbor_alltoallw", "MPI_Wtime",
)  # fmt: skip
CODE = {name: i for i, name in enumerate(CALLS)}
MAGIC = 0x54434154
VERSION = 2
HEADER = struct.Struct("<6i")
RECORD = np.dtype(
    [("t_start", "<i8"), ("t_end", "<i8"), ("bytes", "<i8"), ("call", "<i4"), ("reserved", "<i4")]
)


@dataclass(frozen=True)
class RankCalls:
    """One rank's calls in order: `records` is a structured array of RECORD."""

    rank: int
    world_size: int
    records: np.ndarray
    truncated_bytes: int = 0

    @property
    def finalized(self) -> bool:
        return bool(len(self.records)) and int(self.records["call"][-1]) == CODE["MPI_Finalize"]

    def of(self, *names: str) -> np.ndarray:
        """The records of the named calls, in call order."""
        codes = [CODE[n] for n in names]
        return self.records[np.isin(self.records["call"], codes)]


def read_timing_file(path: Path) -> RankCalls:
    data = Path(path).read_bytes()
    if len(data) < HEADER.size:
        raise InputError(path, "tracer file shorter than its header")
    magic, version, rank, size, _pid, rec_size = HEADER.unpack_from(data, 0)
    if magic != MAGIC or version != VERSION or rec_size != RECORD.itemsize:
        raise InputError(path, f"not a timing-mode tracer file (magic {magic:#x}, v{version})")
    if not 0 < size <= 1 << 22 or not 0 <= rank < size:
        raise InputError(path, f"corrupt header: rank {rank} of world size {size}")
    body = len(data) - HEADER.size
    whole = body - body % RECORD.itemsize
    records = np.frombuffer(data, RECORD, whole // RECORD.itemsize, HEADER.size).copy()
    bad = (records["call"] < 0) | (records["call"] >= len(CALLS))
    if bad.any():
        at = HEADER.size + int(np.argmax(bad)) * RECORD.itemsize
        raise InputError(path, f"unknown call code {int(records['call'][bad][0])} at byte {at}")
    return RankCalls(rank, size, records, body - whole)


def read_timing_dir(directory: Path) -> list[RankCalls]:
    """Every rank's file of one run (rank-*.bin), ordered by rank; all ranks must be there."""
    files = sorted(Path(directory).glob("rank-*.bin"))
    if not files:
        raise InputError(directory, "no tracer output (rank-*.bin): did the program call MPI_Init?")
    ranks = sorted((read_timing_file(f) for f in files), key=lambda r: r.rank)
    world = ranks[0].world_size
    missing = sorted(set(range(world)) - {r.rank for r in ranks})
    if missing or any(r.world_size != world for r in ranks):
        raise InputError(directory, f"ranks {missing} of {world} left no timing file")
    return ranks
