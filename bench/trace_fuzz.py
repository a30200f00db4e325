"""Fuzzing the trace readers that read files (issue 19 §5): SimGrid TiT text, DUMPI `.bin`
rank files, the PMPI tracer's raw rank files and OTF2 archives, each from real files
(../shared/data/traces; the raw files are captured here from tests/traces/programs/
known_calls.c with the real tracer). Shared by bench/fuzz_figures.py and
tests/reliability/test_fuzz_readers.py.

Inputs are read in this process through one scratch file (on /dev/shm when there is one), no
process per input: a TiT file gets text_fuzz's line and token edits, binary files bytes
flipped and cut. OTF2 archives go through the decoder the sandbox runs
(`otf2_decode.decode_otf2`), one damaged archive file per input; `fuzz_isolated` runs chunks
of inputs in child processes (bench/fuzz_chunks.py) so an input that kills the interpreter
(the OTF2 C library is what the sandbox guards against) is counted as a crash and the fuzzing
goes on."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from text_fuzz import FuzzCounts, mutate

SHARED = Path(os.environ.get("TAILCAST_SHARED_DATA", "/work/shared/data")) / "traces"
REPO = Path(__file__).resolve().parents[1]
READERS = ("tit", "dumpi_bin", "tracer_raw", "otf2")


def _scratch_root() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


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


def _reader(name: str, work: Path) -> tuple[Callable[[random.Random], None], int]:
    """One fuzz step (mutate a seed, read it) for `name`, and how many seeds it draws on."""
    path = work / "input"
    if name == "tit":
        from tailcast.traces.tit_import import import_tit

        texts = [p.read_text() for p in sorted((SHARED / "simgrid-tit").glob("actions*.txt"))]

        def tit(rng: random.Random) -> None:
            path.write_text(mutate(rng.choice(texts), rng), errors="surrogateescape")
            import_tit(path)

        return tit, len(texts)
    if name in ("dumpi_bin", "tracer_raw"):
        if name == "dumpi_bin":
            from tailcast.traces.dumpi_format import read_bin as read

            seeds = [p.read_bytes() for p in sorted((SHARED / "dumpi").glob("*.bin"))]
        else:
            from tailcast.traces.capture.raw import read_rank_file as read  # type: ignore[assignment]

            seeds = raw_seeds(work)
        binary = path.with_suffix(".bin")

        def binary_step(rng: random.Random) -> None:
            binary.write_bytes(flip_bytes(rng.choice(seeds), rng))
            read(binary)

        return binary_step, len(seeds)
    if name == "otf2":
        from tailcast.traces.otf2_decode import decode_otf2

        archive = work / "otf2"
        shutil.copytree(SHARED / "otf2" / "sst-macro-10rank", archive)
        anchor = archive / "traces.otf2"
        files = [anchor, archive / "traces.def", *sorted((archive / "traces").iterdir())]
        originals = {f: f.read_bytes() for f in files}

        def otf2_step(rng: random.Random) -> None:
            target = rng.choice(files)
            target.write_bytes(flip_bytes(originals[target], rng))
            try:
                decode_otf2(anchor)
            finally:
                target.write_bytes(originals[target])

        return otf2_step, len(files)
    raise ValueError(f"unknown trace reader {name!r}")


def fuzz_trace_reader(name: str, inputs: int, seed: int = 19) -> FuzzCounts:
    """`inputs` mutants read in this process; crashes are any non-TailcastError exception."""
    rng = random.Random(seed)
    counts = FuzzCounts()
    with tempfile.TemporaryDirectory(prefix="tailcast-fuzz-", dir=_scratch_root()) as scratch:
        step, seeds = _reader(name, Path(scratch))
        if seeds == 0:
            return counts
        for _ in range(inputs):
            counts.attempt(lambda: step(rng))
    return counts
