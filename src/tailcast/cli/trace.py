"""`tailcast trace`: inspect, validate, convert, synthesize and capture MPI traces."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tailcast.cli._common import echo, emit_json, new_app, note
from tailcast.errors import UsageError
from tailcast.units import parse_sizes

if TYPE_CHECKING:
    import pyarrow as pa

    from tailcast.traces.io import TraceMeta

app = new_app(
    "MPI traces: info, validate, convert (OTF2 / SimGrid TiT / DUMPI / Parquet), synthetic "
    "workloads, and capture of real MPI programs with a PMPI tracer."
)


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
    from tailcast.cli.trace_convert import run_convert

    run_convert(src, dst, to=to, fmt=fmt)


@app.command("synth")
def synth(
    kind: Annotated[
        str,
        typer.Argument(
            help="osu | seed002 | poisson (seed 003) | one of seed 000's workloads: all2all "
            "allreduce bisection hotregion nbodies randomapp shift torlocal torremote (or AA AR BI "
            "HR NB RA SH TL TR)"
        ),
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Parquet trace to write.")],
    ranks: Annotated[int, typer.Option("--ranks", "-n", help="Ranks (tasks).")] = 16,
    collective: Annotated[str, typer.Option(help="osu: the collective.")] = "allreduce",
    sizes: Annotated[str, typer.Option(help="osu: sizes, '1,8,4K' or '1:1M'.")] = "1:1M",
    iterations: Annotated[int, typer.Option(help="osu: measured iterations per size.")] = 100,
    warmup: Annotated[int, typer.Option(help="osu: unmeasured iterations per size.")] = 0,
    flows: Annotated[int, typer.Option(help="workloads: number of flows.")] = 5000,
    flow_bytes: Annotated[
        int | None,
        typer.Option(help="workloads: bytes per flow (1e6); poisson: mean length (1 MiB)."),
    ] = None,
    stride: Annotated[int, typer.Option(help="shift: destination stride.")] = 1,
    rack_size: Annotated[int, typer.Option(help="torlocal/torremote: tasks per rack.")] = 12,
    messages: Annotated[
        int, typer.Option(help="seed002: messages per rank; poisson: mean per rank.")
    ] = 100,
    load: Annotated[
        float, typer.Option(help="poisson: offered load, a fraction of Eq. 8's throughput.")
    ] = 0.5,
    lengths: Annotated[str, typer.Option(help="poisson: constant | exponential.")] = "exponential",
    fabric: Annotated[
        str, typer.Option(help="poisson: the Gemini fabric the load is normalised to.")
    ] = "gemini-16",
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
    _check_synth_memory(k, ranks, collective, sizes, iterations, warmup, flows, flow_bytes,
                        stride, rack_size, messages, seed)  # fmt: skip
    if k == "osu":
        table, meta = osu_trace(collective, ranks, parse_sizes(sizes), iterations, warmup)
    elif k == "poisson":
        table, meta = _poisson(ranks, fabric, load, messages, flow_bytes, lengths, seed)
    elif k in ("seed002", "mix"):
        table = seed002_mix_trace(ranks, messages=messages, seed=seed)
        meta = TraceMeta(ranks=ranks, application="seed002-mix", source_format="synthetic",
                         clock="synthetic: no compute", extra={"seed": str(seed)})  # fmt: skip
    else:
        size = 1_000_000 if flow_bytes is None else flow_bytes
        params = WorkloadParams(ranks, flows, size, seed, stride, rack_size)
        table = workload_trace(k, params)
        meta = TraceMeta(ranks=ranks, application=f"seed000-{k}", source_format="synthetic",
                         clock="synthetic: no compute", extra={"seed": str(seed)})  # fmt: skip
    write_trace(table, output, meta)
    note(f"wrote {output} ({table.num_rows} calls, {ranks} ranks)")


def _check_synth_memory(
    kind: str,
    ranks: int,
    collective: str,
    sizes: str,
    iterations: int,
    warmup: int,
    flows: int,
    flow_bytes: int | None,
    stride: int,
    rack_size: int,
    messages: int,
    seed: int,
) -> None:
    """Refuses, before anything is allocated, a trace whose memory estimate exceeds the
    available memory (traces.synth.budget)."""
    from tailcast.traces.synth import WorkloadParams
    from tailcast.traces.synth.budget import check_fits
    from tailcast.traces.synth.mix import mix_rows
    from tailcast.traces.synth.osu import osu_rows
    from tailcast.traces.synth.poisson import poisson_rows
    from tailcast.traces.synth.workloads import workload_rows

    elements = 0
    what = f"trace synth {kind} -n {ranks}"
    if kind == "osu":
        count = len(parse_sizes(sizes))
        rows, elements = osu_rows(collective, ranks, count, iterations, warmup)
        what += f" ({collective}, {count} sizes x {warmup + iterations} iterations)"
    elif kind == "poisson":
        rows = poisson_rows(ranks, messages)
        what += f" ({messages} messages per rank)"
    elif kind in ("seed002", "mix"):
        rows = mix_rows(ranks, messages)
        what += f" ({messages} messages per rank)"
    else:
        size = 1_000_000 if flow_bytes is None else flow_bytes
        rows = workload_rows(kind, WorkloadParams(ranks, flows, size, seed, stride, rack_size))
    check_fits(what, rows, elements)


def _poisson(
    ranks: int, fabric: str, load: float, messages: int, mean: int | None, lengths: str, seed: int
) -> "tuple[pa.Table, TraceMeta]":
    from tailcast.replay.fabric import load_fabric
    from tailcast.replay.photonic_setups import gemini_link, seed003_poisson_trace
    from tailcast.traces.io import TraceMeta

    link = gemini_link(load_fabric(fabric))
    mean_bytes = 1 << 20 if mean is None else mean
    table = seed003_poisson_trace(ranks, link, load=load, messages=messages,
                                  mean_bytes=mean_bytes, lengths=lengths, seed=seed)  # fmt: skip
    extra = {"seed": str(seed), "load": str(load), "lengths": lengths,
             "mean_bytes": str(mean_bytes), "normalised_to": fabric}  # fmt: skip
    meta = TraceMeta(ranks=ranks, application="seed003-poisson", source_format="synthetic",
                     clock="synthetic: Poisson arrivals", extra=extra)  # fmt: skip
    return table, meta


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
