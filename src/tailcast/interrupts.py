"""SIGINT and SIGTERM as the `Interrupted` exception, and never lost.

The handler raises `Interrupted` wherever the main thread is. Python drops an exception
raised inside a finaliser (pyarrow's `ParquetWriter.__del__`, a weakref callback) after
printing "Exception ignored in", and the command would then go on and end as if nothing had
arrived (a `replay run` signalled that way stored its result and exited 0). So the handler
also records the signal, and `raise_pending` raises it again at the checkpoints: the end of
an all-or-nothing store (store/results.py) and the end of the command (`__main__`)."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

from tailcast.errors import Interrupted

_received: list[int] = []  # signals raised as Interrupted, first first


def interrupt(signum: int, frame: FrameType | None = None) -> NoReturn:
    """Raises `Interrupted(signum)` and records the signal (a signal handler)."""
    del frame
    _received.append(signum)
    raise Interrupted(signum)


def _unraisable(args: sys.UnraisableHookArgs) -> None:
    """Python's report of an exception a finaliser dropped, less ours: a dropped `Interrupted`
    is recorded and raised again (raise_pending), and its traceback on stderr would break the
    one line a command ends with (a sweep worker's SIGTERM in `ParquetWriter.__del__`)."""
    if not isinstance(args.exc_value, Interrupted):
        sys.__unraisablehook__(args)


def install() -> None:
    """Makes SIGINT and SIGTERM raise `Interrupted` in this process (and in the processes it
    forks)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, interrupt)
    sys.unraisablehook = _unraisable


def raise_pending() -> None:
    """Raises `Interrupted` for the first recorded signal, once: its first raise may have
    been swallowed by a finaliser. (Where it was not, it is unwinding the process already
    and no checkpoint is reached.)"""
    if _received:
        signum = _received[0]
        _received.clear()
        raise Interrupted(signum)
