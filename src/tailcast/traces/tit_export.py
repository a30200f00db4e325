"""Export to SimGrid time-independent traces, replayable by SimGrid's `smpireplaymain`.

Layout: `dst` is the index ("list") file; the per-rank files go to `<dst>.d/rank<i>.txt`
and the list names them by absolute path, rank i on line i. SimGrid takes each whole line
as a path (smpi_deployment.cpp reads the list with std::getline), so a path may hold spaces
but no line break; smpirun itself passes the list's own path unquoted (`--cfg=smpi/replay:
${APP_TRACES}` in SimGrid 3.32's smpirun), so give it that one without spaces
(`replay_in_simgrid` links it into its work directory). Sizes are written in bytes
(`init` without argument selects MPI_BYTE in SimGrid). The time between two calls of a rank
becomes `compute <flops>` at `flops_per_s` (default 1 Gflop/s: one flop per ns) — replay
with hosts of that speed to reproduce the captured gaps.

SimGrid's TiT knows only MPI_COMM_WORLD: collectives on other communicators and
communicator management are not exported; `export_tit` returns their counts.
Completions become per-request `wait src dst tag` lines (exact, unlike `waitall`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from operator import itemgetter
from pathlib import Path
from typing import Any

import pyarrow as pa

from tailcast.errors import ExternalToolError, InputError, UsageError
from tailcast.traces.io import TraceMeta
from tailcast.traces.schema import Op

DEFAULT_FLOPS_PER_S = 1e9
SMPIREPLAYMAIN = Path("/usr/lib/x86_64-linux-gnu/simgrid/smpireplaymain")


def _world_like(meta: TraceMeta, comm: int | None) -> bool:
    if comm is None or comm == 0:
        return True
    import json

    members = json.loads(meta.extra.get("comms", "{}")).get(str(comm))
    return members is not None and sorted(members) == list(range(meta.ranks))


def _lines(rows: list[dict[str, Any]], rank: int, meta: TraceMeta, skipped: Counter[str],
           ns_per_flop: float) -> list[str]:  # fmt: skip
    n = meta.ranks
    out: list[str] = []
    keys: dict[int, tuple[int, int, int]] = {}  # request -> (src, dst, tag) as SimGrid keys
    last_end: int | None = None

    def size(v: int | None) -> int:
        return int(v or 0)

    def wait(req: int | None) -> None:
        key = keys.pop(req, None) if req is not None else None
        if key is not None:
            out.append(f"{rank} wait {key[0]} {key[1]} {key[2]}")

    for r in rows:
        op = r["op"]
        start, end = r["t_start_ns"], r["t_end_ns"]
        if last_end is not None and start is not None and start > last_end:
            out.append(f"{rank} compute {(start - last_end) / ns_per_flop:.0f}")
        if end is not None:
            last_end = end
        peer, tag = r["peer"], r["tag"] or 0
        if op in (Op.INIT, Op.FINALIZE):
            out.append(f"{rank} {op}")
        elif op in (Op.SEND, Op.ISEND, Op.RECV, Op.IRECV):
            if peer is None or peer < 0:
                skipped[f"{op} (unknown peer)"] += 1
                continue
            nbytes = size(r["send_bytes"] if op in (Op.SEND, Op.ISEND) else r["recv_bytes"])
            out.append(f"{rank} {op} {peer} {tag} {nbytes}")
            if op == Op.ISEND and r["request"] is not None:
                keys[r["request"]] = (rank, peer, tag)
            elif op == Op.IRECV and r["request"] is not None:
                keys[r["request"]] = (peer, rank, tag)
        elif op == Op.SENDRECV:
            rtag = r["recv_tag"] or 0
            out.append(f"{rank} isend {r['peer']} {tag} {size(r['send_bytes'])}")
            out.append(f"{rank} recv {r['recv_peer']} {rtag} {size(r['recv_bytes'])}")
            out.append(f"{rank} wait {rank} {r['peer']} {tag}")
        elif op in (Op.WAIT, Op.TEST, Op.WAITANY, Op.TESTANY):
            wait(r["request"])
        elif op in (Op.WAITALL, Op.WAITSOME, Op.TESTALL, Op.TESTSOME):
            for req in r["requests"] or []:
                wait(req)
        elif op in (Op.COMM_SPLIT, Op.COMM_DUP, Op.COMM_CREATE, Op.COMM_FREE):
            continue  # no communicators in TiT; SimGrid replays these as no-ops anyway
        elif not _world_like(meta, r["comm"]):
            skipped[f"{op} on a sub-communicator"] += 1
        else:
            out.append(_collective(rank, n, r))
    return out


def _collective(rank: int, n: int, r: dict[str, Any]) -> str:
    op = r["op"]
    sb, rb = int(r["send_bytes"] or 0), int(r["recv_bytes"] or 0)
    root = r["root"] if r["root"] is not None else 0
    zeros = " ".join(["0"] * n)

    def counts(values: list[int] | None) -> str:
        return " ".join(str(int(v)) for v in values) if values else zeros

    if op == Op.BARRIER:
        return f"{rank} barrier"
    if op == Op.BCAST:
        return f"{rank} bcast {sb} {root}"
    if op == Op.REDUCE:
        return f"{rank} reduce {sb} 0 {root}"
    if op == Op.ALLREDUCE:
        return f"{rank} allreduce {sb} 0"
    if op in (Op.ALLTOALL, Op.ALLGATHER):
        return f"{rank} {op} {sb} {rb or sb}"
    if op in (Op.GATHER, Op.SCATTER):
        s = sb or rb
        return f"{rank} {op} {s} {rb or s} {root}"
    if op == Op.ALLTOALLV:
        return f"{rank} alltoallv {sb} {counts(r['send_counts'])} {rb} {counts(r['recv_counts'])}"
    if op == Op.ALLGATHERV:
        return f"{rank} allgatherv {sb} {counts(r['recv_counts'])}"
    if op == Op.GATHERV:
        return f"{rank} gatherv {sb} {counts(r['recv_counts'])} {root}"
    if op == Op.SCATTERV:
        return f"{rank} scatterv {counts(r['send_counts'])} {rb} {root}"
    if op == Op.REDUCE_SCATTER:
        return f"{rank} reducescatter {counts(r['recv_counts'])} 0"
    if op == Op.REDUCE_SCATTER_BLOCK:
        return f"{rank} reducescatter {' '.join([str(rb)] * n)} 0"
    raise InputError("<trace>", f"rank {rank} seq {r['seq']}: cannot export {op} to TiT")


def export_tit(
    table: pa.Table, meta: TraceMeta, dst: Path, flops_per_s: float = DEFAULT_FLOPS_PER_S
) -> Counter[str]:
    """Writes the list file `dst` and one file per rank; returns what was not exported."""
    dst = Path(dst).resolve()
    if "\n" in str(dst) or "\r" in str(dst):
        raise UsageError(
            f"{str(dst)!r}: a TiT list holds one path per line, so a path with a line break "
            "cannot be listed; choose another output path"
        )
    rank_dir = dst.with_name(dst.name + ".d")
    created = not rank_dir.exists()
    rank_dir.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.tmp")
    try:
        skipped: Counter[str] = Counter()
        rows_by_rank: dict[int, list[dict[str, Any]]] = {r: [] for r in range(meta.ranks)}
        # Batch by batch, and no sort of the whole table (1 s of C for 3 M rows): a single
        # long native call would hold off Ctrl-C. Each rank's rows are put in seq order on
        # their own (already in order in a written trace, which timsort passes in one scan).
        for batch in table.to_batches(max_chunksize=1 << 16):
            for row in batch.to_pylist():
                rows_by_rank.setdefault(row["rank"], []).append(row)
        paths = []
        for rank in range(meta.ranks):
            rows = rows_by_rank[rank]
            rows.sort(key=itemgetter("seq"))
            lines = _lines(rows, rank, meta, skipped, 1e9 / flops_per_s)
            path = rank_dir / f"rank{rank}.txt"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            paths.append(str(path))
        tmp.write_text("\n".join(paths) + "\n", encoding="utf-8")
        os.replace(tmp, dst)  # the list file last: no list names a missing rank file
    except BaseException:  # failed or interrupted: what this export made goes again
        tmp.unlink(missing_ok=True)
        if created:
            shutil.rmtree(rank_dir, ignore_errors=True)
        raise
    return skipped


def write_simgrid_platform(
    directory: Path, ranks: int, speed_flops: float = 1e9
) -> tuple[Path, Path]:
    """A one-cluster SimGrid platform (`ranks` hosts) and its hostfile, for replay checks."""
    directory.mkdir(parents=True, exist_ok=True)
    platform = directory / "platform.xml"
    platform.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        f'  <cluster id="c" prefix="node-" suffix="" radical="0-{ranks - 1}" '
        f'speed="{speed_flops:g}f" bw="10GBps" lat="1us"/>\n</platform>\n',
        encoding="utf-8",
    )
    hostfile = directory / "hostfile"
    hostfile.write_text("".join(f"node-{i}\n" for i in range(ranks)), encoding="utf-8")
    return platform, hostfile


def replay_in_simgrid(list_file: Path, ranks: int, workdir: Path, timeout: float = 600) -> str:
    """Runs SimGrid's smpireplaymain on a TiT list; returns its output, raises on failure.
    smpirun splits the list's and the hostfile's paths at spaces (module doc): it gets them
    as names in its work directory, the list through a link."""
    platform, hostfile = write_simgrid_platform(workdir, ranks)
    link = workdir / "trace.list"
    link.unlink(missing_ok=True)
    link.symlink_to(Path(list_file).resolve())
    argv = ["smpirun", "-no-privatize", "-replay", link.name, "-np", str(ranks)]
    argv += ["-platform", platform.name, "-hostfile", hostfile.name, str(SMPIREPLAYMAIN)]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, cwd=workdir, check=False
        )
    except FileNotFoundError as exc:
        raise ExternalToolError("smpirun", "not found (install libsimgrid-dev)") from exc
    except subprocess.TimeoutExpired as exc:
        raise ExternalToolError("smpirun", f"timed out after {timeout} s") from exc
    if proc.returncode != 0:
        raise ExternalToolError("smpirun", "replay failed", proc.stderr, proc.returncode)
    return proc.stdout + proc.stderr
