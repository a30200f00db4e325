"""Shared CLI plumbing: output helpers and the Typer factory every sub-app uses.

Data goes to stdout, messages to stderr (DESIGN.md conventions)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

TYPE_CHECKING = False  # (typing.TYPE_CHECKING, which type checkers read as True)
if TYPE_CHECKING:  # typer loads with the sub-apps, not with these helpers (tailcast.__main__)
    from typing import Any

    import typer


def new_app(help_text: str, no_args_is_help: bool = True) -> typer.Typer:
    """A sub-app with tailcast's settings: no shell-completion noise, plain tracebacks off.
    Single-command apps (quickstart, report) pass no_args_is_help=False."""
    import typer

    return typer.Typer(
        help=help_text,
        no_args_is_help=no_args_is_help,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


def _default(obj: Any) -> Any:
    from datetime import date, datetime  # (not loaded by commands that write no JSON)

    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item"):  # numpy scalars
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _finite(obj: Any) -> Any:
    """JSON has no NaN/inf: map them to null so every --json output parses strictly."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def emit_json(obj: Any) -> None:
    """Writes one JSON document to stdout."""
    sys.stdout.write(json.dumps(_finite(obj), default=_default, indent=2) + "\n")


def echo(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def aligned(rows: list[list[str]], indent: str = "") -> list[str]:
    """Rows of cells as lines: every cell but a row's last padded to the widest such cell of
    its column and two spaces, so no cell runs into the next whatever its length. A row's
    last cell is not padded and does not widen its column (a long note under a row)."""
    widths: dict[int, int] = {}
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths.get(i, 0), len(cell))
    return [
        indent + "".join(cell.ljust(widths[i] + 2) for i, cell in enumerate(row[:-1])) + row[-1]
        for row in rows
    ]


def note(text: str) -> None:
    """A message for the human (stderr), kept out of data on stdout."""
    sys.stderr.write(text + "\n")
