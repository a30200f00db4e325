"""`tailcast`: the entry point. Mounts one Typer sub-app per concern and owns the single
error handler (one line on stderr; exit 0 ok, 1 failure, 2 usage, 3 not accepted)."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated

import typer

from tailcast import __version__
from tailcast.cli import (
    agent,
    analyze,
    collect,
    db,
    doctor,
    predict,
    quickstart,
    replay,
    report,
    trace,
)
from tailcast.errors import EXIT_FAILURE, TailcastError

app = typer.Typer(
    help=(
        "tailcast measures MPI latency tails inside Slurm jobs, captures MPI traces, replays "
        "them through modelled fabrics, compares measured with simulated tails and predicts "
        "the tail at submission time. Results go to $TAILCAST_HOME "
        "(default ~/.local/share/tailcast)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

_state = {"debug": False}


def _engine_version() -> str:
    try:
        from tailcast import _core

        return str(_core.engine_version())
    except ImportError as exc:  # a source tree without the compiled engine
        return f"unavailable ({exc})"


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"tailcast {__version__} (replay engine {_engine_version()})\n")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback when a command fails.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the package and replay-engine versions and exit.",
        ),
    ] = False,
) -> None:
    _state["debug"] = debug or os.environ.get("TAILCAST_DEBUG") == "1"


# One line per sub-command, in the order of the workflow: what it is for, for a newcomer.
SUBCOMMANDS = [
    (
        quickstart.app,
        "quickstart",
        "Whole pipeline on bundled real data, ends in a report.",
    ),
    (collect.app, "collect", "Slurm queue → background traffic b; topology; OSU files."),
    (agent.app, "agent", "Measure collective latencies inside Slurm jobs."),
    (trace.app, "trace", "Capture, import (OTF2/DUMPI/TiT), synthesise MPI traces."),
    (replay.app, "replay", "Replay a trace on a modelled fabric: simulated latencies."),
    (
        analyze.app,
        "analyze",
        "Tails, fits, bimodality, b correlation, measured vs sim.",
    ),
    (report.app, "report", "Write a static HTML report of everything in the store."),
    (predict.app, "predict", "Predict a collective's latency tail from the live queue's b."),
    (db.app, "db", "Query the results store with SQL (DuckDB over Parquet)."),
    (doctor.app, "doctor", "What this machine has for tailcast; what missing parts turn off."),
]
for sub_app, name, short in SUBCOMMANDS:
    app.add_typer(sub_app, name=name, short_help=short)


def main() -> None:
    """Console-script entry point with the one error handler."""
    try:
        app()
    except TailcastError as err:
        if _state["debug"]:
            traceback.print_exc()
        sys.stderr.write(f"tailcast: error: {err}\n")
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("tailcast: interrupted\n")
        sys.exit(130)
    except Exception as err:  # an unexpected failure is still one line unless --debug
        if _state["debug"]:
            traceback.print_exc()
        sys.stderr.write(f"tailcast: internal error: {type(err).__name__}: {err}\n")
        sys.exit(EXIT_FAILURE)


if __name__ == "__main__":
    main()
