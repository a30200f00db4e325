"""`tailcast`: the Typer app. Mounts one Typer sub-app per concern; the console script
(tailcast.__main__: the one error handler) runs it through `run_app`."""

import os
import sys
from collections.abc import Iterator, MutableMapping
from gettext import gettext as _
from typing import Annotated, Any

import typer
from typer._click import Command, Context, HelpFormatter
from typer._click import exceptions as click_errors
from typer.core import TyperGroup
from typer.main import get_group_from_info
from typer.models import TyperInfo

HELP = (
    "tailcast measures MPI latency tails inside Slurm jobs, captures MPI traces, replays "
    "them through modelled fabrics, compares measured with simulated tails and predicts "
    "the tail at submission time. Results go to $TAILCAST_HOME "
    "(default ~/.local/share/tailcast)."
)


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
    if debug:  # read by the error handler (tailcast.__main__), and by child commands
        os.environ["TAILCAST_DEBUG"] = "1"


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
    ("calibrate", "Fit a fabric's host model to a stored campaign; validate it."),
    ("predict", "Predict a collective's latency tail from the live queue's b."),
    ("db", "Query the results store with SQL (DuckDB over Parquet)."),
    ("doctor", "What this machine has for tailcast; what missing parts turn off."),
]
_SHORT = dict(SUBCOMMANDS)


class _SubCommands(MutableMapping[str, Command]):
    """The root's sub-commands by name. One is built (its module imported, its commands'
    parameters read from their signatures: most of a start-up's CPU) when first looked up,
    so a command builds only its own and `--help`/`--version` build none."""

    def __init__(self, root: TyperGroup) -> None:
        self._root = root
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            if name not in _SHORT:
                raise KeyError(name)
            # __import__ (the import statement's path): `python -X importtime` lists it.
            __import__(f"tailcast.cli.{name}")
            module = sys.modules[f"tailcast.cli.{name}"]
            # What `add_typer(module.app, name=name, short_help=...)` records and
            # typer.main.get_group builds for it.
            self._built[name] = get_group_from_info(
                TyperInfo(module.app, name=name, short_help=_SHORT[name]),
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=self._root.suggest_commands,
                rich_markup_mode=self._root.rich_markup_mode,
            )
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        raise TypeError("tailcast's sub-commands are the modules SUBCOMMANDS lists")

    def __delitem__(self, name: str) -> None:
        raise TypeError("tailcast's sub-commands are the modules SUBCOMMANDS lists")

    def __contains__(self, name: object) -> bool:
        return name in _SHORT  # without building it

    def __iter__(self) -> Iterator[str]:
        return iter(_SHORT)

    def __len__(self) -> int:
        return len(_SHORT)


class _Root(TyperGroup):
    """The root group over _SubCommands: typer's own parsing, dispatch and "Did you
    mean" suggestions, with nothing built until a sub-command is looked up."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _SubCommands(self)

    def list_commands(self, ctx: Context) -> list[str]:
        return list(_SHORT)  # names only (typer's lists name-command pairs: builds all)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        # typer's rows are each command's short help, which is SUBCOMMANDS' line.
        with formatter.section(_("Commands")):
            formatter.write_dl(SUBCOMMANDS)


app = typer.Typer(
    cls=_Root,
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.callback()(_root)


def run_app(argv: list[str]) -> int:
    """Runs the app on `argv`; returns the exit status. Click's own errors (a missing
    argument, an unknown option, a value out of an option's range) become tailcast's
    UsageError, so the one error handler prints them as every other error: one
    `tailcast: error:` line, exit 2, instead of Click's usage line, hint and message."""
    from tailcast.errors import TailcastError, UsageError

    try:
        status = app(args=argv, prog_name="tailcast", standalone_mode=False)
    except click_errors.NoArgsIsHelpError as shown:  # a bare group: its help is the answer
        shown.show()
        return shown.exit_code
    except click_errors.UsageError as err:
        path = err.ctx.command_path if err.ctx is not None else "tailcast"
        command = path.removeprefix("tailcast").strip()
        message = " ".join(err.format_message().split()).rstrip(".")
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message}; see `{path} --help`") from err
    except click_errors.ClickException as err:
        raise TailcastError(" ".join(err.format_message().split())) from err
    except typer.Abort as err:
        raise TailcastError("aborted") from err
    # Without standalone mode a command's `typer.Exit(code)` (and --help's) comes back as
    # its code; a command that returned normally gives its return value (None).
    return status if isinstance(status, int) else 0
