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

from tailcast.errors import EXIT_FAILURE, Interrupted, TailcastError

HELP = (
    "tailcast measures MPI latency tails inside Slurm jobs, captures MPI traces, replays "
    "them through modelled fabrics, compares measured with simulated tails and predicts "
    "the tail at submission time. Results go to $TAILCAST_HOME "
    "(default ~/.local/share/tailcast)."
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


# One line per sub-command (its module in tailcast.cli has the same name), in the order of
# the workflow: what it is for, for a newcomer.
SUBCOMMANDS = [
    ("quickstart", "Whole pipeline on bundled real data, ends in a report."),
    ("collect", "Slurm queue → background traffic b; topology; OSU files."),
    ("agent", "Measure collective latencies inside Slurm jobs."),
    ("trace", "Capture, import (OTF2/DUMPI/TiT), synthesise MPI traces."),
    ("replay", "Replay a trace on a modelled fabric: simulated latencies."),
    ("analyze", "Tails, fits, bimodality, b correlation, measured vs sim."),
    ("report", "Write a static HTML report of everything in the store."),
    ("lab", "Calibrate a tree cluster's link classes; lab campaigns."),
    ("predict", "Predict a collective's latency tail from the live queue's b."),
    ("db", "Query the results store with SQL (DuckDB over Parquet)."),
    ("doctor", "What this machine has for tailcast; what missing parts turn off."),
]


def build_app(only: str | None = None) -> typer.Typer:
    """The root app with every sub-command, or only `only`'s: a command run from the shell
    imports the one sub-command module it runs, not the other ten (start-up CPU)."""
    root = typer.Typer(
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    root.callback()(_root)
    for name, short in SUBCOMMANDS:
        if only is None or name == only:
            # __import__ (the import statement's path): `python -X importtime` lists it.
            __import__(f"tailcast.cli.{name}")
            module = sys.modules[f"tailcast.cli.{name}"]
            root.add_typer(module.app, name=name, short_help=short)
    return root


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole CLI (built on first use, for tests and tools that import it)."""
    if name != "app":
        raise AttributeError(f"module 'tailcast.cli.main' has no attribute {name!r}")
    whole = build_app()
    globals()["app"] = whole
    return whole


def _chosen(argv: list[str]) -> str | None:
    """The sub-command `argv` runs, when its first argument names one (root options such
    as --debug come first and need the whole app's parsing)."""
    names = {name for name, _ in SUBCOMMANDS}
    return argv[1] if len(argv) > 1 and argv[1] in names else None


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
        build_app(_chosen(sys.argv))()
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
