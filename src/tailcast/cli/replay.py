"""`tailcast replay`: replay MPI traces through modelled fabrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tailcast.cli._common import echo, emit_json, new_app, note

app = new_app(
    "Replay a tailcast Parquet trace through a modelled fabric (loggp, flow-level fat tree, "
    "torus, crossbar) and store per-operation simulated times."
)


@app.command("run")
def run(
    trace: Annotated[Path, typer.Argument(help="A tailcast Parquet trace.")],
    fabric: Annotated[
        str, typer.Option("--fabric", help="A fabric TOML file or a bundled name (see `fabrics`).")
    ] = "ideal",
    seed: Annotated[int, typer.Option("--seed", help="Seed of random placement/routing.")] = 0,
    coll: Annotated[
        str,
        typer.Option("--coll", help="Force collective algorithms, e.g. allreduce=ring,bcast=1."),
    ] = "",
    placement: Annotated[
        str,
        typer.Option("--placement", help="linear, random, or a file: one endpoint per rank."),
    ] = "linear",
    compute_scale: Annotated[
        float,
        typer.Option("--compute-scale", help="Factor on captured compute gaps (0 = comm only)."),
    ] = 1.0,
    eager_threshold: Annotated[
        int,
        typer.Option("--eager-threshold", help="Largest eager message in bytes (seed 004: 8 KiB)."),
    ] = 8192,
    store: Annotated[
        bool, typer.Option("--store/--no-store", help="Write results to $TAILCAST_HOME.")
    ] = True,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream/--in-memory",
            help="Read the trace in chunks (memory bounded by the rows in flight; needs a "
            "trace sorted by rank, as tailcast writes them). Summaries then give op counts.",
        ),
    ] = False,
    ops: Annotated[
        bool, typer.Option("--ops/--no-ops", help="Store per-operation times (with --stream).")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
) -> None:
    """Replays TRACE; prints total simulated time and per-op-type p50/p99."""
    from tailcast.errors import UsageError
    from tailcast.replay.fabric import load_fabric
    from tailcast.replay.run import ReplayOptions, replay_trace
    from tailcast.store import ResultsDir

    if compute_scale < 0 or eager_threshold < 0:
        raise UsageError("--compute-scale and --eager-threshold must be >= 0")
    options = ReplayOptions(
        seed=seed,
        coll=coll,
        placement=placement,
        compute_scale=compute_scale,
        eager_threshold_bytes=eager_threshold,
    )
    results = ResultsDir() if store else None
    if stream:
        from tailcast.replay.stream import stream_replay

        streamed = stream_replay(trace, load_fabric(fabric), options, results, keep_ops=ops)
        if streamed.unknown_ops:
            note(f"replayed as local no-ops (unknown to the engine): {streamed.unknown_ops}")
        if as_json:
            emit_json(streamed.summary())
        else:
            _print_stream_summary(streamed.summary())
        return
    outcome = replay_trace(trace, load_fabric(fabric), options, results)
    summary = outcome.summary()
    if outcome.unknown_ops:
        note(f"replayed as local no-ops (unknown to the engine): {outcome.unknown_ops}")
    if as_json:
        emit_json(summary)
        return
    _print_summary(summary)


def _print_head(s: dict[str, Any], how: str = "") -> None:
    echo(f"trace      {s['trace']} ({s['ranks']} ranks, {s['actions']} actions{how})")
    echo(f"fabric     {s['fabric']}")
    echo(f"total time {s['total_time_us']:.3f} us")
    if s["iterations"]:
        echo(
            f"iterations {s['iterations']}: p50 {s['iteration_p50_us']:.3f} us, "
            f"p99 {s['iteration_p99_us']:.3f} us"
        )


def _print_summary(s: dict[str, Any]) -> None:
    _print_head(s)
    echo(f"{'op':<22}{'count':>10}{'p50 us':>14}{'p99 us':>14}")
    for name, row in sorted(s["ops"].items()):
        echo(f"{name:<22}{row['count']:>10}{row['p50_us']:>14.3f}{row['p99_us']:>14.3f}")
    if s["stored"]:
        note(f"replay {s['replay_id']} stored ({len(s['stored'])} files)")


def _print_stream_summary(s: dict[str, Any]) -> None:
    _print_head(s, ", streamed")
    for name, count in sorted(s["op_counts"].items()):
        echo(f"{name:<22}{count:>10}")
    if s["stored"]:
        note(f"replay {s['replay_id']} stored ({len(s['stored'])} files)")


@app.command("fabrics")
def fabrics(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable list.")] = False,
) -> None:
    """Lists the bundled fabric models."""
    import tomllib

    from tailcast.replay.fabric import bundled_fabrics

    rows = [
        {"name": name, "description": tomllib.loads(text).get("description", "")}
        for name, text in bundled_fabrics().items()
    ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        echo(f"{row['name']:<14}{row['description']}")
