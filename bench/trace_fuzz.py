"""Fuzzing the trace readers that read files (issue 19 §5): SimGrid TiT text, DUMPI `.bin`
rank files, the PMPI tracer's raw rank files and OTF2 archives. Shared by
bench/fuzz_figures.py and tests/reliability/test_fuzz_readers.py.

Seeds are real files (../shared/data/traces; the raw files are captured here from
tests/traces/programs/known_calls.c with the real tracer) except OTF2's, see below. Each input
is one seed mutated (a TiT file gets text_fuzz's line and token edits, binary files bytes
flipped and cut), written to the scratch directory (on /dev/shm when there is one) and read
by the reader's import function, in the fuzzing process: no process per input, except OTF2.

OTF2: the `otf2` bindings cost ~2.5 ms per archive opened (they create ~120 ctypes callbacks
and read the definitions through Python), plus ~0.1 ms per definition or event record: the
10-rank sst-macro archive (725 definitions, 22,180 events) takes ~60 ms an input. So the
seeds of the 1 M run are small archives written here with the same bindings (2 and 4 ranks,
the MPI records the importer converts, 36-150 events, the smallest chunk sizes OTF2 allows),
and the sst-macro archive itself is a seed of the sandbox sample (`otf2_sandbox`).
What the C library does with a damaged archive depends on what the process did before:
in sequence, damaged archives made later ones spin, and even one valid archive read first
changes which errors later damaged ones give (valgrind: it branches on uninitialised memory
in otf2_buffer_read_header, so leftover heap contents, not kept state, are the likely cause).
(Some damaged anchor files overflow a heap buffer on their own,
which aborts the process or not depending on the heap's layout: see
tests/reliability/test_fuzz_readers.py.) A user's archive is read alone, in the sandbox's
child process. So `otf2` decodes each archive in a process of its own, forked from
the fuzzing process (which reads no archive: it only writes the seeds, and 1,000 inputs gave
the same outcomes with seeds written by another process) and running the sandbox child's code
(`otf2_sandbox.decode_into`, under the sandbox's address-space limit), whose result this
process reads as the sandbox does (`otf2_sandbox.outcome`): the user's path without an
interpreter start per archive. `otf2_sandbox` calls `import_otf2` itself, the user's path
(an interpreter per input, ~0.5 s of CPU each)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from text_fuzz import FuzzCounts, Step, Target, fuzz_target, mutate

if TYPE_CHECKING:
    import pyarrow as pa

    from tailcast.traces.io import TraceMeta

SHARED = Path(os.environ.get("TAILCAST_SHARED_DATA", "/work/shared/data")) / "traces"
REPO = Path(__file__).resolve().parents[1]
READERS = ("tit", "dumpi_bin", "tracer_raw", "otf2")
OTF2_SST = SHARED / "otf2" / "sst-macro-10rank"


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
    """A small valid archive: each rank Init, Comm_rank, `rounds` times (Isend, Irecv,
    Waitall to its ring neighbours, Send or Recv, Allreduce, Bcast, Barrier), Finalize.
    Chunks of 256 KiB (OTF2's least): the reader allocates a chunk per file it opens, and
    the default 4 MiB definition chunk alone costs ~10 ms an input."""
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


def otf2_seeds(work: Path) -> list[Archive]:
    shapes = [(2, 1), (2, 3), (4, 2)]
    return [_archive(write_otf2_seed(work / f"seed-{r}x{k}", r, k).parent) for r, k in shapes]


def sandbox_seeds(work: Path) -> list[Archive]:
    return [*otf2_seeds(work), _archive(OTF2_SST)]


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


class DecoderCrash(Exception):
    """The sandbox's child ended with neither a trace nor a typed error: killed by a signal,
    out of memory under its limit, or an untyped exception. `import_otf2` would turn it into
    an InputError; the fuzzer counts it as a crash."""


def _forked_decoder_stepper(seeds: list[Archive], scratch: Path) -> Step:
    """`_otf2_stepper` reading with `_decode_in_own_process`, once this process has imported
    what the sandbox's child imports: each forked child then starts with them loaded."""
    import otf2  # noqa: F401

    import tailcast.traces.otf2_decode  # noqa: F401

    return _otf2_stepper(_decode_in_own_process, seeds, scratch)


def _decode_in_own_process(anchor: Path) -> tuple[pa.Table, TraceMeta]:
    """The sandbox's child code in a child forked for this one archive; then the sandbox's
    reading of its result. A child still running after the sandbox's timeout is killed here
    and is a hang (DecoderCrash): the library can spin on a damaged archive (it branches on
    uninitialised memory in otf2_buffer_read_header), and a caller without the bench's own
    per-input limit, such as a test, must not wait for ever."""
    from tailcast.traces import otf2_sandbox

    timeout, memory = otf2_sandbox.limits(anchor)
    work = anchor.parent / "sandbox-work"
    work.mkdir(exist_ok=True)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:  # the library's messages go where the sandbox puts them (its last line names a death)
            log = os.open(work / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            status = otf2_sandbox.decode_into(anchor, work, memory)
        finally:
            os._exit(status)
    try:
        if not otf2_sandbox.exited_within(pid, timeout):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise DecoderCrash(f"hang: decoder still running after {timeout:g} s")
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        error = otf2_sandbox.child_error(work)
        last = otf2_sandbox.last_line(work / "stderr.txt")[:100]
        if code < 0:
            raise DecoderCrash(f"process died (signal {signal.Signals(-code).name}): {last}")
        if (error is None and code != 0) or (error is not None and error.get("kind") != "input"):
            detail = f"{error.get('kind')}: {error.get('message', '')}" if error else last
            raise DecoderCrash(f"exit {code}: {detail[:100]}")
        return otf2_sandbox.outcome(anchor, work, code, memory)
    finally:
        for f in work.iterdir():
            f.unlink()


def _import_sandboxed(anchor: Path) -> object:
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
    "otf2": Target(otf2_seeds, _forked_decoder_stepper),
    "otf2_sandbox": Target(sandbox_seeds, partial(_otf2_stepper, _import_sandboxed)),
}


def fuzz_trace_reader(name: str, inputs: int, seed: int = 19) -> FuzzCounts:
    """`inputs` mutants read in this process (OTF2: in a child per input); crashes are any
    non-TailcastError exception."""
    return fuzz_target(TARGETS[name], inputs, seed)
