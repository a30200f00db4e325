"""`tailcast replay`: replay MPI traces through modelled fabrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from tailcast.cli import sweep
from tailcast.cli._common import echo, emit_json, new_app, note

app = new_app(
    "Replay a tailcast Parquet trace through a modelled fabric (see `fabrics`), optionally "
    "under background traffic, and store per-operation simulated times."
)

app.add_typer(sweep.app, name="sweep")


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
        typer.Option(
            "--placement",
            help="linear, random, same_group, same_island, different_islands (fabrics with "
            "groups and islands), nodes:HOSTLIST (the fabric's `nodes` names), or a file: "
            "one endpoint per rank.",
        ),
    ] = "linear",
    nodes: Annotated[
        int | None,
        typer.Option("--nodes", min=1, help="Nodes of a locality placement (default: ranks)."),
    ] = None,
    background: Annotated[
        list[str] | None,
        typer.Option(
            "--background",
            help="A synthetic background job, PATTERN:nodes=N:load=L[:bytes=64K]"
            "[:arrivals=poisson|periodic][:hot=F][:placement=random|linear|E0,E1,…]; "
            "PATTERN = uniform, nearest_neighbour, all_to_all, permutation, hot_spot. "
            "Repeatable.",
        ),
    ] = None,
    background_trace: Annotated[
        list[str] | None,
        typer.Option(
            "--background-trace",
            help="A trace replayed in the background on free endpoints, FILE[@random|linear|"
            "E0,E1,…]. Repeatable.",
        ),
    ] = None,
    messages: Annotated[
        bool | None,
        typer.Option(
            "--messages/--no-messages",
            help="Store every delivered message (replay_messages) and per-row fabric "
            "columns; default: when the fabric reports per-message details.",
        ),
    ] = None,
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
    from tailcast.replay.background import parse_job, parse_trace
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
        nodes=nodes,
        background=tuple(parse_job(b) for b in background or []),
        background_traces=tuple(parse_trace(b) for b in background_trace or []),
        record_messages=messages,
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
    stats = s["fabric_stats"]
    if "background_offered_load" in stats:
        echo(
            f"background {s['background_messages']} messages, offered load "
            f"{stats['background_offered_load']:.3f}, delivered "
            f"{stats['background_delivered_load']:.3f}"
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
    describe: Annotated[
        str | None,
        typer.Option(
            "--describe",
            help="Print the parameters of a model (e.g. flow) or of a bundled fabric's model.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Lists the bundled fabrics and the fabric models, or describes one model."""
    import tomllib

    from tailcast.errors import UsageError
    from tailcast.replay.fabric import bundled_fabrics, model_docs

    models = model_docs()
    bundled = bundled_fabrics()
    if describe is not None:
        model = describe
        if describe in bundled:
            model = str(tomllib.loads(bundled[describe]).get("model", ""))
        if model not in models:
            known = ", ".join([*models, *bundled])
            raise UsageError(f"--describe {describe!r}: not a model or bundled fabric ({known})")
        doc = models[model]
        if as_json:
            emit_json(doc)
            return
        echo(f"model {doc['name']}: {doc['doc']}")
        for p in doc["params"]:
            default = "required" if p["required"] else f"default {p['default']}"
            echo(f"  {p['key']:<34} {p['expected']}; {default}")
            echo(f"  {'':<34} {p['doc']}")
        return
    rows = [
        {
            "name": name,
            "model": tomllib.loads(text).get("model", ""),
            "description": tomllib.loads(text).get("description", ""),
        }
        for name, text in bundled.items()
    ]
    if as_json:
        emit_json(
            {"fabrics": rows, "models": [{"name": m, "doc": d["doc"]} for m, d in models.items()]}
        )
        return
    for row in rows:
        echo(f"{row['name']:<16}{row['model']:<16}{row['description']}")
    echo("")
    echo("models (tailcast replay fabrics --describe MODEL):")
    for name, d in models.items():
        echo(f"  {name:<16}{d['doc']}")
