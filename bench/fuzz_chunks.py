"""Running fuzz targets (bench/text_fuzz.py's `Target`s) in forked children, two at a time
(issue 19 §5). The parent builds each reader's seeds once and forks a child per chunk of
inputs; a child only mutates and reads. So there is no interpreter start-up per chunk, and:

- an input that kills the child (a native library aborting, a Rust panic, the address-space
  limit) is a crash recorded with its seed and index; the chunk goes on after it (the inputs
  since the child's last snapshot of its counts are run again: inputs are replayable);
- an input still running after HANG_S of wall time (or the reader's own limit) is a hang:
  the child is killed with its
  process group (and any process the reader forked), the
  input recorded, and the chunk goes on after it (the per-input time limit);
- each child runs under an address-space limit (bounded memory); its peak RSS and CPU time
  come from wait4, so the figures are the children's own, whatever else runs here.

The child's stderr (a native library's messages) goes to a file in its
scratch directory, emptied at every snapshot: its last line names a process death."""

from __future__ import annotations

import faulthandler
import json
import mmap
import os
import resource
import shutil
import signal
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from text_fuzz import FuzzCounts, Target, run_inputs

HANG_S = 10.0  # wall time, on a shared 2-core machine: 6x the slowest input seen under load
MEMORY_LIMIT = 4 << 30  # address space per child
SNAPSHOT_EVERY = 250  # inputs between snapshots of a child's counts: what a death re-runs
JOBS = 2
KEEP = Path(tempfile.gettempdir())  # where a dead or hung child's scratch files are kept
CHUNK = 50_000


def _scratch_root() -> str | None:
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


@dataclass
class ReaderRun:
    """One reader's figures, summed over its children."""

    counts: FuzzCounts = field(default_factory=FuzzCounts)
    deaths: list[dict[str, Any]] = field(default_factory=list)  # seed, index, message
    cpu_s: float = 0.0
    rss_kb: int = 0
    done: int = 0  # inputs whose outcome is counted

    def add(self, snap: dict[str, Any]) -> None:
        c = self.counts
        c.inputs += snap["inputs"]
        c.accepted += snap["accepted"]
        c.typed_errors.update(snap["typed"])
        c.crashes.update(snap["crashes"])
        c.slow += snap["slow"]
        c.max_input_s = max(c.max_input_s, snap["max_s"])
        c.examples.extend(snap["examples"][: max(0, 10 - len(c.examples))])

    def figures(self) -> dict[str, Any]:
        c = self.counts
        rate = c.inputs / self.cpu_s if self.cpu_s else 0.0
        return {
            "inputs": c.inputs,
            "accepted": c.accepted,
            "typed_errors": dict(c.typed_errors),
            "crashes": dict(c.crashes),
            "crash_inputs": c.examples + [_described(d) for d in self.deaths[:10]],
            "slow_inputs_over_1s": c.slow,
            "max_input_s": round(c.max_input_s, 4),
            "peak_rss_mb": round(self.rss_kb / 1024, 1),
            "cpu_s": round(self.cpu_s, 1),
            "inputs_per_cpu_s": round(rate, 1),
            "projected_cpu_min_for_1m": round(1e6 / rate / 60, 1) if rate else None,
        }


def _described(death: dict[str, Any]) -> str:
    return f"seed {death['seed']} input {death['index']}: {death['message']} ({death['kept']})"


def _snapshot(counts: FuzzCounts, next_index: int) -> dict[str, Any]:
    return {"inputs": counts.inputs, "accepted": counts.accepted,
            "typed": dict(counts.typed_errors), "crashes": dict(counts.crashes),
            "slow": counts.slow, "max_s": counts.max_input_s, "examples": counts.examples,
            "next": next_index}  # fmt: skip


def _child(target: Target, seeds: Any, seed: int, start: int, stop: int, scratch: Path,
           progress: mmap.mmap) -> None:  # fmt: skip
    """Runs inputs start..stop-1; never returns (os._exit)."""
    status = 1
    try:
        os.setpgid(0, 0)  # (also done by the parent: whichever runs first) see _start
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, resource.RLIM_INFINITY))
        faulthandler.disable()  # (pytest's) its traceback would hide the library's last words
        err = os.open(scratch / "stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(err, 2)
        step = target.stepper(seeds, scratch)
        counts = FuzzCounts()
        snap_path, tmp = scratch / "counts.json", scratch / "counts.tmp"

        def at(i: int) -> None:
            struct.pack_into("q", progress, 0, i)
            if (i - start) % SNAPSHOT_EVERY == 0 and i > start:
                tmp.write_text(json.dumps(_snapshot(counts, i)))
                tmp.replace(snap_path)
                os.ftruncate(2, 0)

        run_inputs(step, seed, start, stop, counts, at)
        tmp.write_text(json.dumps(_snapshot(counts, stop)))
        tmp.replace(snap_path)
        status = 0
    finally:
        os._exit(status)


@dataclass
class _Running:
    reader: str
    seed: int
    start: int
    stop: int
    scratch: Path
    progress: mmap.mmap
    hang_s: float
    index: int = -1
    since: float = field(default_factory=time.monotonic)


def fuzz_readers(targets: dict[str, Target], inputs: dict[str, int], seed: int = 19,
                 chunks: dict[str, int] | None = None, deadline: float | None = None,
                 hangs: dict[str, float] | None = None) -> dict[str, ReaderRun]:  # fmt: skip
    """`inputs[name]` inputs of each target, in chunks of `chunks[name]` inputs (default
    CHUNK), JOBS children at a time; an input of `name` running over `hangs[name]` seconds
    (default HANG_S) is a hang. At `deadline` (time.time()) running children are
    stopped and what they counted kept; chunks not started are left out (the figures say
    how many inputs ran)."""
    runs = {name: ReaderRun() for name in inputs}
    work = Path(tempfile.mkdtemp(prefix="tailcast-fuzz-", dir=_scratch_root()))
    seeds = {}
    for name in inputs:
        (work / name).mkdir()
        seeds[name] = targets[name].seeds(work / name)
    # Round robin over the readers, so that a deadline leaves each with a share of its count.
    size = {name: (chunks or {}).get(name, CHUNK) for name in inputs}
    queue = sorted(
        ((name, seed, a, min(a + size[name], inputs[name]))
         for name in inputs if seeds[name] for a in range(0, inputs[name], size[name])),
        key=lambda task: (task[2] / inputs[task[0]], list(inputs).index(task[0])),
    )  # fmt: skip
    running: dict[int, _Running] = {}
    serial = 0
    try:
        while queue or running:
            stopping = deadline is not None and time.time() > deadline
            if stopping and not running:
                break  # the chunks not started are left out
            while queue and len(running) < JOBS and not stopping:
                name, s, a, b = queue.pop(0)
                serial += 1
                scratch = work / f"child-{serial}"
                scratch.mkdir()
                progress = mmap.mmap(-1, 8)
                struct.pack_into("q", progress, 0, a - 1)
                pid = _start(targets[name], seeds[name], s, a, b, scratch, progress)
                hang_s = (hangs or {}).get(name, HANG_S)
                running[pid] = _Running(name, s, a, b, scratch, progress, hang_s)
            time.sleep(0.2)
            for pid, r in list(running.items()):
                index = struct.unpack_from("q", r.progress, 0)[0]
                if index != r.index:
                    r.index, r.since = index, time.monotonic()
                hung = time.monotonic() - r.since > r.hang_s
                if hung or stopping:
                    os.killpg(pid, signal.SIGKILL)
                got, status, usage = os.wait4(pid, 0 if (hung or stopping) else os.WNOHANG)
                if got == 0:
                    continue
                del running[pid]
                queue[:0] = _finish(runs[r.reader], r, status, usage, hung, stopping)
    finally:
        for pid in running:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        shutil.rmtree(work, ignore_errors=True)
    return runs


def _start(target: Target, seeds: Any, seed: int, start: int, stop: int, scratch: Path,
           progress: mmap.mmap) -> int:  # fmt: skip
    """Forks the child for inputs start..stop-1 as the leader of a process group of its own,
    so that killing the group kills whatever it forked too. The parent sets the group as well:
    a kill right after the fork must not find the child still in the bench's group."""
    pid = os.fork()
    if pid == 0:
        _child(target, seeds, seed, start, stop, scratch, progress)
    os.setpgid(pid, pid)
    return pid


def _finish(run: ReaderRun, r: _Running, status: int, usage: Any, hung: bool,
            stopped: bool) -> list[tuple[str, int, int, int]]:  # fmt: skip
    """Counts a child's work; returns the ranges still to run (after a death: the inputs
    since its last snapshot, then the ones after the fatal input)."""
    run.cpu_s += usage.ru_utime + usage.ru_stime
    run.rss_kb = max(run.rss_kb, usage.ru_maxrss)
    try:
        snap = json.loads((r.scratch / "counts.json").read_text())
    except (OSError, ValueError):
        snap = None
    if snap is not None:
        run.add(snap)
    if (status == 0 and not hung) or (stopped and not hung):
        shutil.rmtree(r.scratch, ignore_errors=True)
        return []
    fatal = r.index
    message = f"hang: input running over {r.hang_s:g} s" if hung else _death(r.scratch, status)
    kept = KEEP / f"tailcast-fuzz-crash-{r.reader}-{r.seed}-{fatal}"
    shutil.copytree(r.scratch, kept, dirs_exist_ok=True)  # the damaged files, if any
    shutil.rmtree(r.scratch, ignore_errors=True)
    run.deaths.append({"seed": r.seed, "index": fatal, "message": message, "kept": str(kept)})
    run.counts.crashes[message] += 1
    if fatal < r.start:  # died before its first input (setting up): nothing to resume
        return []
    run.counts.inputs += 1
    resumed = snap["next"] if snap else r.start
    return [(r.reader, r.seed, a, b) for a, b in ((resumed, fatal), (fatal + 1, r.stop)) if a < b]


def _death(scratch: Path, status: int) -> str:
    """How a child died: its signal or exit status, and its last stderr line (a C++
    exception's what() when there is one)."""
    try:
        lines = (scratch / "stderr.txt").read_text(errors="replace").strip().splitlines()
    except OSError:
        lines = []
    last = next((x.strip() for x in reversed(lines) if "what()" in x), lines[-1] if lines else "")
    code = os.waitstatus_to_exitcode(status)
    cause = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
    return f"process died ({cause}): {last[:100]}"
