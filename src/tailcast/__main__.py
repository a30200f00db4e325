"""The console script (`tailcast`, `python -m tailcast`): signals, the one error handler
(one line on stderr; exit 0 ok, 1 failure, 2 usage, 3 not accepted), and the dispatch. A
`trace convert SRC DST` with no option runs without Typer: typer and click import ~100
modules, a third of a small conversion's CPU. Everything else, options and help included,
goes to the Typer app (cli.main.run_app), which parses; Click's usage errors come back as
UsageError, so they too are one line here."""

import contextlib
import os
import signal
import sys

from tailcast import interrupts
from tailcast.errors import EXIT_FAILURE, Interrupted, TailcastError


def _traceback() -> None:
    """The failing command's traceback with --debug (cli.main's root option sets
    TAILCAST_DEBUG=1) or TAILCAST_DEBUG=1; traceback loads only then."""
    if os.environ.get("TAILCAST_DEBUG") == "1":
        import traceback

        traceback.print_exc()


def _run(argv: list[str]) -> int:
    plain = not any(arg.startswith("-") for arg in argv)
    if plain and len(argv) == 4 and argv[:2] == ["trace", "convert"]:
        from pathlib import Path

        from tailcast.cli.trace_convert import run_convert

        run_convert(Path(argv[2]), Path(argv[3]))
        return 0
    from tailcast.cli.main import run_app

    return run_app(argv)


def main() -> None:
    """Console-script entry point with the one error handler. SIGINT and SIGTERM raise
    Interrupted wherever the command is (the replay engine polls for them): what was being
    written is removed (store/results.py `all_or_nothing`), one line says so, and the exit
    status is 130 or 143, also when a finaliser swallowed the first raise (interrupts.py)."""
    interrupts.install()
    try:
        status = _run(sys.argv[1:])
        interrupts.raise_pending()
    except TailcastError as err:
        _traceback()
        sys.stderr.write(f"tailcast: error: {err}\n")
        sys.exit(err.exit_code)
    except Interrupted as stop:
        _traceback()
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
        _traceback()
        sys.stderr.write(f"tailcast: internal error: {type(err).__name__}: {err}\n")
        sys.exit(EXIT_FAILURE)
    if status:  # a command's own exit status (`typer.Exit(1)`: a traced program failed)
        sys.exit(status)


if __name__ == "__main__":
    main()
