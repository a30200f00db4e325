"""`tailcast trace`: inspect, validate, convert, synthesize and capture MPI traces."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import UsageError

app = new_app(
    "MPI traces: info, validate, convert (OTF2 / SimGrid TiT / DUMPI / Parquet), synthetic "
    "workloads, and capture of real MPI programs with a PMPI tracer."
)

_SIZE = re.compile(r"^(\d+)([kKmMgG]?)$")
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_sizes(text: str) -> list[int]:
    """`1,8,4K` or an OSU-style power-of-two range `1:1M`."""

    def one(token: str) -> int:
        m = _SIZE.match(token.strip())
        if not m:
            raise UsageError(f"bad size {token!r} (use e.g. 8, 4K, 1M)")
        return int(m.group(1)) * _UNITS[m.group(2).lower()]

    if ":" in text:
        lo_text, hi_text = text.split(":", 1)
        lo, hi = one(lo_text), one(hi_text)
        if lo > hi:
            raise UsageError(f"empty size range {text!r}")
        sizes, s = [], lo
        while s <= hi:
            sizes.append(s)
            s = s * 2 if s else 1
        return sizes
    return [one(t) for t in text.split(",") if t.strip()]


@app.command("info")
def info(
    trace: Annotated[Path, typer.Argument(help="A trace in any supported format.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
    fmt: Annotated[str | None, typer.Option("--from", help="Input format override.")] = None,
) -> None:
    """Ranks, calls and bytes per operation, duration."""
    from tailcast.traces.convert import detect_format, load_trace
    from tailcast.traces.info import format_info, summarize_table, trace_info

    if (fmt or detect_format(trace)) == "parquet":
        summary = trace_info(trace)
    else:
        table, meta = load_trace(trace, fmt)
        summary = summarize_table(table, meta, str(trace))
    if as_json:
        emit_json(summary.to_dict())
    else:
        echo(format_info(summary))


@app.command("validate")
def validate(
    trace: Annotated[Path, typer.Argument(help="A trace in any supported format.")],
    as_json: Annotated[bool, typer.Option("--json", help="Violations as JSON.")] = False,
    fmt: Annotated[str | None, typer.Option("--from", help="Input format override.")] = None,
) -> None:
    """Check p2p matching, collective consistency and request completion."""
    from tailcast.traces.convert import load_trace
    from tailcast.traces.validate import MAX_REPORTED, TraceInvalid, validate_table

    table, meta = load_trace(trace, fmt)
    found = validate_table(table, meta)
    if as_json:
        emit_json(
            {
                "trace": str(trace),
                "valid": not found,
                "violations": [
                    {"kind": v.kind, "rank": v.rank, "seq": v.seq, "op": v.op, "message": v.reason}
                    for v in found
                ],
            }
        )
    else:
        for v in found[:MAX_REPORTED]:
            echo(str(v))
        if len(found) > MAX_REPORTED:
            echo(f"… and {len(found) - MAX_REPORTED} more")
    if found:
        raise TraceInvalid(found)
    if not as_json:
        note(f"{trace}: valid ({table.num_rows} calls, {meta.ranks} ranks)")


@app.command("convert")
def convert(
    src: Annotated[Path, typer.Argument(help="Input trace (format detected).")],
    dst: Annotated[Path, typer.Argument(help="Output path (Parquet file, or TiT list file).")],
    to: Annotated[str, typer.Option("--to", help="parquet | tit")] = "parquet",
    fmt: Annotated[
        str | None, typer.Option("--from", help="Override detection: otf2|tit|dumpi|parquet")
    ] = None,
) -> None:
    """Convert between trace formats."""
    from tailcast.traces.convert import convert as do_convert

    meta = do_convert(src, dst, to=to, fmt=fmt)
    for name, count in sorted(meta.unsupported.items()):
        note(f"warning: {count} unsupported call(s) {name} not converted")
    note(f"wrote {dst} ({meta.ranks} ranks, from {meta.source_format})")


@app.command("synth")
def synth(
    kind: Annotated[
        str,
        typer.Argument(
            help="osu | seed002 | one of seed 000's workloads: all2all allreduce bisection "
            "hotregion nbodies randomapp shift torlocal torremote (or AA AR BI HR NB RA SH TL TR)"
        ),
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Parquet trace to write.")],
    ranks: Annotated[int, typer.Option("--ranks", "-n", help="Ranks (tasks).")] = 16,
    collective: Annotated[str, typer.Option(help="osu: the collective.")] = "allreduce",
    sizes: Annotated[str, typer.Option(help="osu: sizes, '1,8,4K' or '1:1M'.")] = "1:1M",
    iterations: Annotated[int, typer.Option(help="osu: measured iterations per size.")] = 100,
    warmup: Annotated[int, typer.Option(help="osu: unmeasured iterations per size.")] = 0,
    flows: Annotated[int, typer.Option(help="workloads: number of flows.")] = 5000,
    flow_bytes: Annotated[int, typer.Option(help="workloads: bytes per flow.")] = 1_000_000,
    stride: Annotated[int, typer.Option(help="shift: destination stride.")] = 1,
    rack_size: Annotated[int, typer.Option(help="torlocal/torremote: tasks per rack.")] = 12,
    messages: Annotated[int, typer.Option(help="seed002: messages per node.")] = 100,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
) -> None:
    """Write a synthetic trace."""
    from tailcast.traces.io import TraceMeta, write_trace
    from tailcast.traces.synth import (
        WorkloadParams,
        osu_trace,
        seed002_mix_trace,
        workload_trace,
    )

    k = kind.lower()
    if k == "osu":
        table, meta = osu_trace(collective, ranks, parse_sizes(sizes), iterations, warmup)
    elif k in ("seed002", "mix"):
        table = seed002_mix_trace(ranks, messages=messages, seed=seed)
        meta = TraceMeta(ranks=ranks, application="seed002-mix", source_format="synthetic",
                         clock="synthetic: no compute", extra={"seed": str(seed)})  # fmt: skip
    else:
        params = WorkloadParams(ranks, flows, flow_bytes, seed, stride, rack_size)
        table = workload_trace(k, params)
        meta = TraceMeta(ranks=ranks, application=f"seed000-{k}", source_format="synthetic",
                         clock="synthetic: no compute", extra={"seed": str(seed)})  # fmt: skip
    write_trace(table, output, meta)
    note(f"wrote {output} ({table.num_rows} calls, {ranks} ranks)")


@app.command("capture", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def capture(
    ctx: typer.Context,
    output: Annotated[Path, typer.Option("-o", "--output", help="Parquet trace to write.")],
    application: Annotated[str | None, typer.Option(help="Name stored in the trace.")] = None,
    keep_raw: Annotated[bool, typer.Option(help="Keep the per-rank raw files.")] = False,
    timeout: Annotated[float | None, typer.Option(help="Seconds before the run is killed.")] = None,
) -> None:
    """Run a launcher command under the PMPI tracer: trace capture -o t.parquet -- mpirun …"""
    from tailcast.traces.capture import capture_run

    argv = [a for a in ctx.args if a != "--"] if ctx.args[:1] == ["--"] else list(ctx.args)
    if not argv:
        raise UsageError("give the command to run after --, e.g. -- mpirun -np 4 ./app")
    result = capture_run(argv, output, application=application, keep_raw=keep_raw,
                         timeout=timeout, progress=note)  # fmt: skip
    note(
        f"wrote {output}: {result.calls} calls from {result.ranks} rank(s)"
        + ("" if result.returncode == 0 else f"; the program exited {result.returncode}")
    )
    if result.returncode != 0:
        raise typer.Exit(1)


@app.command("build-tracer")
def build_tracer(
    force: Annotated[bool, typer.Option(help="Rebuild even if up to date.")] = False,
) -> None:
    """Compile the PMPI tracer with the site's mpicc into the per-user cache (one build per
    MPI and version; `trace capture` does this on first use)."""
    from tailcast.traces.capture import build_tracer as do_build

    echo(str(do_build(force=force, progress=note)))
