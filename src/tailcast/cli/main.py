"""`tailcast`: the entry point. Mounts one Typer sub-app per concern and owns the single
error handler (one line on stderr; exit 0 ok, 1 failure, 2 usage, 3 not accepted)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import traceback
from types import FrameType
from typing import Annotated

import typer

from tailcast.cli import (
    agent,
    analyze,
    collect,
    db,
    doctor,
    lab,
    predict,
    quickstart,
    replay,
    report,
    trace,
)
from tailcast.errors import EXIT_FAILURE, Interrupted, TailcastError

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
        from tailcast import __version__

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
    (lab.app, "lab", "Calibrate a tree cluster's link classes; lab campaigns."),
    (predict.app, "predict", "Predict a collective's latency tail from the live queue's b."),
    (db.app, "db", "Query the results store with SQL (DuckDB over Parquet)."),
    (doctor.app, "doctor", "What this machine has for tailcast; what missing parts turn off."),
]
for sub_app, name, short in SUBCOMMANDS:
    app.add_typer(sub_app, name=name, short_help=short)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    del frame
    raise Interrupted(signum)


def main() -> None:
    """Console-script entry point with the one error handler. SIGINT and SIGTERM raise
    Interrupted wherever the command is (the replay engine polls for them): what was being
    written is removed (store/results.py `all_or_nothing`), one line says so, and the exit
    status is 130 or 143."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        app()
    except TailcastError as err:
        if _state["debug"]:
            traceback.print_exc()
        sys.stderr.write(f"tailcast: error: {err}\n")
        sys.exit(err.exit_code)
    except Interrupted as stop:
        if _state["debug"]:
            traceback.print_exc()
        detail = stop.detail or "nothing partial was stored"
        sys.stderr.write(f"tailcast: interrupted by {signal.Signals(stop.signum).name}: {detail}\n")
        # Unwinding has run every cleanup (partial files removed, temporary directories
        # gone); skip the interpreter's teardown of the scientific stack (~0.4 s CPU) so the
        # command ends promptly.
        with contextlib.suppress(OSError):  # a closed pipe: nothing more to say
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(stop.exit_code)
    except Exception as err:  # an unexpected failure is still one line unless --debug
        if _state["debug"]:
            traceback.print_exc()
        sys.stderr.write(f"tailcast: internal error: {type(err).__name__}: {err}\n")
        sys.exit(EXIT_FAILURE)


if __name__ == "__main__":
    main()
