"""Atomic file writes: a file becomes visible under its final name only when complete. It
is written to a hidden temporary file in the same directory, fsynced, then renamed (rename
is atomic within one file system), and the directory is fsynced so the rename survives a
crash. Readers never see a partial file (they skip `TMP_PREFIX` names)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

TMP_PREFIX = ".tmp-"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(final: Path) -> Iterator[Path]:
    """Yields a hidden temporary path next to `final`; on success fsyncs and renames it to
    `final`, on any error removes it. Readers never see a partial file."""
    final.parent.mkdir(parents=True, exist_ok=True)
    # pid + 4 random bytes: unique among concurrent writers (uuid would import platform, a
    # few ms of every command's start-up).
    tmp = final.parent / f"{TMP_PREFIX}{final.name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        _fsync_dir(final.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
