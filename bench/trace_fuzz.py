"""Fuzzing the trace readers that read files (issue 19 §5): SimGrid TiT text, DUMPI `.bin`
rank files, the PMPI tracer's raw rank files and OTF2 archives. Shared by
bench/fuzz_figures.py and tests/reliability/test_fuzz_readers.py.

Seeds are real files (../shared/data/traces; the raw files are captured here from
tests/traces/programs/known_calls.c with the real tracer) except OTF2's, see below. Each input
is one seed mutated (a TiT file gets text_fuzz's line and token edits, binary files bytes
flipped and cut), written to the scratch directory (on /dev/shm when there is one) and read
by the reader's import function, in the fuzzing process: no process per input.

OTF2: the seeds are small valid archives (2 and 4 ranks, the MPI records the importer
converts, 36-150 events per location) kept in tests/data/otf2-seeds, written by
`write_otf2_seed` with the `otf2` wheel's writer (Score-P's C library). An input damages one
file of one seed archive; `import_otf2` reads it with tailcast's own reader
(tailcast._core.read_otf2), in this process like the other readers."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from text_fuzz import FuzzCounts, Step, Target, fuzz_target, mutate

SHARED = Path(os.environ.get("TAILCAST_SHARED_DATA", "/work/shared/data")) / "traces"
REPO = Path(__file__).resolve().parents[1]
READERS = ("tit", "dumpi_bin", "tracer_raw", "otf2")
OTF2_SEEDS = REPO / "tests" / "data" / "otf2-seeds"


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not buf:
            break
        at = rng.randrange(len(buf))
        if rng.random() < 0.5:
            buf[at] = rng.randrange(256)
        else:  # an extreme little-endian integer where a count or size may be
            buf[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x80", b"\0\0\0\0"])
    if rng.random() < 0.3:
        del buf[rng.randrange(len(buf) + 1) :]
    return bytes(buf)


def raw_seeds(work: Path) -> list[bytes]:
    """Rank files of a real capture (mpicc + mpirun + the tracer), or [] without Open MPI."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        return []
    from tailcast.traces.capture import capture_run

    exe = work / "known_calls"
    src = REPO / "tests" / "traces" / "programs" / "known_calls.c"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(src)], check=True, timeout=300)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader"}  # fmt: skip
    argv = ["mpirun", "--oversubscribe", "-np", "4", str(exe)]
    capture_run(argv, work / "t.parquet", keep_raw=True, env=env, timeout=600)
    return [p.read_bytes() for p in sorted(work.glob(".t-raw-*/rank-*.bin"))]


def _tit_stepper(texts: list[str], scratch: Path) -> Step:
    from tailcast.traces.tit_import import import_tit

    path = scratch / "input.txt"

    def tit(rng: random.Random) -> object:
        path.write_text(mutate(rng.choice(texts), rng), errors="surrogateescape")
        return import_tit(path)

    return tit


def _binary_stepper(read: Callable[[Path], object], seeds: list[bytes], scratch: Path) -> Step:
    path = scratch / "input.bin"

    def binary(rng: random.Random) -> object:
        path.write_bytes(flip_bytes(rng.choice(seeds), rng))
        return read(path)

    return binary


def _read_dumpi(path: Path) -> object:
    from tailcast.traces.dumpi_format import read_bin

    return read_bin(path)


def _read_raw(path: Path) -> object:
    from tailcast.traces.capture.raw import read_rank_file

    return read_rank_file(path)


# ---- OTF2 -----------------------------------------------------------------------------

Archive = dict[str, bytes]  # an OTF2 archive: its files' bytes by path relative to its root

_MPI_REGIONS = ("MPI_Init", "MPI_Comm_rank", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                "MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier",
                "MPI_Finalize")  # fmt: skip


def write_otf2_seed(root: Path, ranks: int, rounds: int) -> Path:
    """A small valid archive written by the `otf2` wheel (which must be installed): each
    rank Init, Comm_rank, `rounds` times (Isend, Irecv, Waitall to its ring neighbours,
    Send or Recv, Allreduce, Bcast, Barrier), Finalize. Chunks of 256 KiB (OTF2's least).
    The fuzzing's seeds in OTF2_SEEDS are shapes 2x1, 2x3 and 4x2 of it."""
    import otf2  # type: ignore[import-untyped]
    from otf2.enums import CollectiveOp, GroupType, Paradigm, RegionRole

    chunk = 256 << 10
    with otf2.writer.open(str(root), "traces", timer_resolution=1_000_000_000,
                          chunk_size_events=chunk, chunk_size_definitions=chunk) as w:  # fmt: skip
        d = w.definitions
        node = d.system_tree_node("node")
        locs = [
            d.location(f"rank {r}", group=d.location_group(f"rank {r}", system_tree_parent=node))
            for r in range(ranks)
        ]
        d.group("locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=locs)  # fmt: skip
        world = d.comm("MPI_COMM_WORLD", group=d.group(
            "world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
            members=list(range(ranks))))  # fmt: skip
        region = {n: d.region(n, region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
                  for n in _MPI_REGIONS}  # fmt: skip
        for r, loc in enumerate(locs):
            events = w.event_writer_from_location(loc)
            clock = [1000 * r]

            def call(name: str, *records: tuple[Any, ...], events: Any = events,
                     clock: list[int] = clock) -> None:  # fmt: skip
                events.enter(clock[0], region[name])
                for write, *args in records:
                    clock[0] += 5
                    getattr(events, write)(clock[0], *args)
                clock[0] += 10
                events.leave(clock[0], region[name])
                clock[0] += 20

            peer, source = (r + 1) % ranks, (r - 1) % ranks
            all_bytes, everyone = 8 * ranks, 0xFFFFFFFF  # no root
            call("MPI_Init")
            call("MPI_Comm_rank")
            for k in range(rounds):
                call("MPI_Isend", ("mpi_isend", peer, world, 7, 1024, 2 * k))
                call("MPI_Irecv", ("mpi_irecv_request", 2 * k + 1))
                call("MPI_Waitall", ("mpi_isend_complete", 2 * k),
                     ("mpi_irecv", source, world, 7, 1024, 2 * k + 1))  # fmt: skip
                if r % 2 == 0:
                    call("MPI_Send", ("mpi_send", peer, world, 3, 64))
                else:
                    call("MPI_Recv", ("mpi_recv", source, world, 3, 64))
                for name, op, coll_root, sent, got in (
                    ("MPI_Allreduce", CollectiveOp.ALLREDUCE, everyone, all_bytes, all_bytes),
                    ("MPI_Bcast", CollectiveOp.BCAST, 0, 256 if r == 0 else 0, 256),
                    ("MPI_Barrier", CollectiveOp.BARRIER, everyone, 0, 0),
                ):
                    call(name, ("mpi_collective_begin",),
                         ("mpi_collective_end", op, world, coll_root, sent, got))  # fmt: skip
            call("MPI_Finalize")
    return root / "traces.otf2"


def _archive(root: Path) -> Archive:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and p.suffix in (".otf2", ".def", ".evt")}  # fmt: skip


def otf2_seeds(_work: Path) -> list[Archive]:
    return [_archive(d) for d in sorted(OTF2_SEEDS.iterdir()) if d.is_dir()]


def _otf2_stepper(read: Callable[[Path], object], seeds: list[Archive], scratch: Path) -> Step:
    """Damages one file of one archive (copied into `scratch`), reads the archive, repairs
    the file: an input is one damaged file."""
    anchors = []
    for k, archive in enumerate(seeds):
        for rel, data in archive.items():
            (scratch / f"a{k}" / rel).parent.mkdir(parents=True, exist_ok=True)
            (scratch / f"a{k}" / rel).write_bytes(data)
        anchors.append(scratch / f"a{k}" / "traces.otf2")

    def otf2_step(rng: random.Random) -> object:
        k = rng.randrange(len(seeds))
        rel = rng.choice(list(seeds[k]))
        target = scratch / f"a{k}" / rel
        target.write_bytes(flip_bytes(seeds[k][rel], rng))
        try:
            return read(anchors[k])
        finally:
            target.write_bytes(seeds[k][rel])

    return otf2_step


def _import_otf2(anchor: Path) -> object:
    from tailcast.traces.otf2_import import import_otf2

    return import_otf2(anchor)


def _shared(kind: str, pattern: str) -> Callable[[Path], list[Any]]:
    def seeds(_work: Path) -> list[Any]:
        files = sorted((SHARED / kind).glob(pattern))
        return [p.read_text() if kind == "simgrid-tit" else p.read_bytes() for p in files]

    return seeds


TARGETS: dict[str, Target] = {
    "tit": Target(_shared("simgrid-tit", "actions*.txt"), _tit_stepper),
    "dumpi_bin": Target(_shared("dumpi", "*.bin"), partial(_binary_stepper, _read_dumpi)),
    "tracer_raw": Target(raw_seeds, partial(_binary_stepper, _read_raw)),
    "otf2": Target(otf2_seeds, partial(_otf2_stepper, _import_otf2)),
}


def fuzz_trace_reader(name: str, inputs: int, seed: int = 19) -> FuzzCounts:
    """`inputs` mutants read in this process; crashes are any non-TailcastError exception."""
    return fuzz_target(TARGETS[name], inputs, seed)
