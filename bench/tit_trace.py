"""The SimGrid time-independent (TiT) halo trace of issue #16, written as SimGrid reads it.

Per rank and iteration: `compute 1e6` (flops), irecv from the left neighbour, irecv from
the right, isend to the right, isend to the left (8 KiB each), `waitall`; a 1 KiB
allreduce every 50 iterations; `init` first and `finalize` last. 16 ranks x 13,808
iterations = 1,330,016 TiT lines ("actions" as SimGrid counts them). One file per rank and
a list file naming them, rank i on line i: the form `smpirun -replay LIST` and
`tailcast trace convert LIST` both take.

`init` has no argument, so sizes are bytes (SimGrid's default datatype is then MPI_BYTE).
Tags: 1 for messages going right, 2 for messages going left, so the two receives of a
rank never race for the same message even when left == right.
"""

from __future__ import annotations

from pathlib import Path

RANKS = 16
ITERATIONS = 13_808
HALO_BYTES = 8192
ALLREDUCE_BYTES = 1024
ALLREDUCE_EVERY = 50
COMPUTE_FLOPS = "1e6"


def rank_lines(rank: int, ranks: int, iterations: int) -> list[str]:
    left, right = (rank - 1) % ranks, (rank + 1) % ranks
    step = [
        f"{rank} compute {COMPUTE_FLOPS}\n",
        f"{rank} irecv {left} 1 {HALO_BYTES}\n",
        f"{rank} irecv {right} 2 {HALO_BYTES}\n",
        f"{rank} isend {right} 1 {HALO_BYTES}\n",
        f"{rank} isend {left} 2 {HALO_BYTES}\n",
        f"{rank} waitall\n",
    ]
    allreduce = f"{rank} allreduce {ALLREDUCE_BYTES} 0\n"
    lines = [f"{rank} init\n"]
    for it in range(iterations):
        lines.extend(step)
        if (it + 1) % ALLREDUCE_EVERY == 0:
            lines.append(allreduce)
    lines.append(f"{rank} finalize\n")
    return lines


def write_tit_trace(
    directory: Path, ranks: int = RANKS, iterations: int = ITERATIONS
) -> tuple[Path, int]:
    """Writes `directory/rank<i>.txt` and the list file `directory/trace.tit`; returns the
    list file and the total number of TiT lines."""
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    listed = []
    for rank in range(ranks):
        lines = rank_lines(rank, ranks, iterations)
        path = directory / f"rank{rank}.txt"
        path.write_text("".join(lines))
        listed.append(f"{path.resolve()}\n")
        total += len(lines)
    index = directory / "trace.tit"
    index.write_text("".join(listed))
    return index, total
