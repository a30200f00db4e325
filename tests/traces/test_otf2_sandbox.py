"""The OTF2 import's child process: same result as in-process, limits, no leftovers."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tailcast.errors import InputError, UsageError
from tailcast.traces.otf2_decode import decode_otf2
from tailcast.traces.otf2_import import import_otf2
from tailcast.traces.otf2_sandbox import MEMORY_ENV, TIMEOUT_ENV

ARCHIVE = "traces/otf2/sst-macro-10rank"


@pytest.fixture()
def anchor(shared_data: Path, tmp_path: Path) -> Path:
    """A private, writable copy of the archive: its path is unique to the test, so the
    test can look for processes still naming it."""
    copy = tmp_path / "archive"
    shutil.copytree(shared_data / ARCHIVE, copy)
    for f in [copy, *copy.rglob("*")]:
        f.chmod(0o755 if f.is_dir() else 0o644)
    return copy / "traces.otf2"


@pytest.fixture()
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory the sandbox creates its work directory in."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def processes_naming(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains `text`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if text in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def test_sandboxed_import_equals_in_process(shared_data: Path, private_tmp: Path) -> None:
    path = shared_data / ARCHIVE / "traces.otf2"
    table, meta = import_otf2(path)
    expected_table, expected_meta = decode_otf2(path)
    assert table.equals(expected_table, check_metadata=True)
    assert table.schema.equals(expected_table.schema, check_metadata=True)
    assert meta == expected_meta
    assert list(private_tmp.iterdir()) == []  # the work directory is gone


def test_tiny_timeout_kills_the_child(
    anchor: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, "0.02")
    with pytest.raises(InputError) as err:
        import_otf2(anchor)
    assert str(anchor) in str(err.value) and "timed out after 0.02 s" in str(err.value)
    assert processes_naming(str(anchor)) == []
    assert list(private_tmp.iterdir()) == []


def test_reader_blocked_inside_the_c_library_is_killed(anchor: Path, private_tmp: Path) -> None:
    # A FIFO nobody writes to as the global definitions: the OTF2 C library's open(2) of it
    # blocks for good — a hang no Python-level check in the reader can interrupt.
    defs = anchor.with_suffix(".def")
    defs.unlink()
    os.mkfifo(defs)
    with pytest.raises(InputError) as err:
        import_otf2(anchor, timeout_s=3)
    assert str(anchor) in str(err.value) and "timed out after 3 s" in str(err.value)
    assert processes_naming(str(anchor)) == []
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("via_env", [False, True])
def test_tiny_memory_limit_is_an_input_error(
    anchor: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch, via_env: bool
) -> None:
    if via_env:
        monkeypatch.setenv(MEMORY_ENV, "64")
    with pytest.raises(InputError) as err:
        import_otf2(anchor, memory_mb=None if via_env else 64)
    assert str(anchor) in str(err.value)
    assert "ran out of memory under the 64 MiB address-space limit" in str(err.value)
    assert processes_naming(str(anchor)) == []
    assert list(private_tmp.iterdir()) == []


def test_input_error_in_the_child_keeps_its_message(anchor: Path, private_tmp: Path) -> None:
    evt = anchor.parent / "traces" / "3.evt"
    evt.write_bytes(evt.read_bytes()[:1000])
    with pytest.raises(InputError) as in_process:
        decode_otf2(anchor)
    with pytest.raises(InputError) as sandboxed:
        import_otf2(anchor)
    assert str(sandboxed.value) == str(in_process.value)
    assert (sandboxed.value.path, sandboxed.value.reason, sandboxed.value.line) == (
        in_process.value.path,
        in_process.value.reason,
        in_process.value.line,
    )
    assert list(private_tmp.iterdir()) == []


def test_missing_anchor_starts_no_child(tmp_path: Path, private_tmp: Path) -> None:
    with pytest.raises(InputError, match="no such OTF2 anchor file"):
        import_otf2(tmp_path / "nothing" / "traces.otf2")
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("value", ["soon", "0", "-5", "nan", "inf"])
def test_bad_limit_settings_are_usage_errors(
    anchor: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(TIMEOUT_ENV, value)
    with pytest.raises(UsageError, match=TIMEOUT_ENV if value == "soon" else "positive"):
        import_otf2(anchor)
    monkeypatch.delenv(TIMEOUT_ENV)
    with pytest.raises(UsageError, match="positive"):
        import_otf2(anchor, memory_mb=0)
