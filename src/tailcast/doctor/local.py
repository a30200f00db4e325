"""Doctor checks of tailcast itself: the interpreter, the installed dependencies, the compiled
replay engine, an actual offline replay of the bundled trace, and the results store. These
are the `essential` checks: together they say whether offline replay works here."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from importlib import metadata, resources
from pathlib import Path

from tailcast.doctor.probe import Check, Status, run_probe
from tailcast.paths import results_home

OFFLINE = ("offline trace replay", "analyze", "report", "quickstart")
BUNDLED_TRACE = ("data", "quickstart", "halo-4rank.parquet")
STORE_WALK_LIMIT = 100_000  # files counted before the store size is reported as a lower bound
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def python_check() -> Check:
    version = ".".join(str(v) for v in sys.version_info[:3])
    good = sys.version_info >= (3, 11)
    return Check(
        "python",
        Status.OK if good else Status.ERROR,
        f"{version} at {sys.executable}",
        OFFLINE,
        essential=True,
        hint="" if good else "tailcast needs Python >= 3.11",
        details={"version": version, "executable": sys.executable},
    )


def packages_check() -> Check:
    """Every runtime dependency the installed tailcast declares is installed (read from the
    package metadata: nothing is imported, so this costs milliseconds)."""
    try:
        declared = metadata.requires("tailcast") or []
        own = metadata.version("tailcast")
    except metadata.PackageNotFoundError:
        return Check(
            "packages",
            Status.ERROR,
            "tailcast is not installed (running from a source tree?)",
            OFFLINE,
            essential=True,
            hint="pip install the wheel, or `make install` in a checkout",
        )
    found: dict[str, str] = {}
    missing: list[str] = []
    for requirement in declared:
        if "extra ==" in requirement:
            continue
        match = _NAME.match(requirement)
        if not match:
            continue
        name = match.group(0)
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    details = {"tailcast": own, "installed": found, "missing": missing}
    if missing:
        return Check(
            "packages",
            Status.MISSING,
            f"not installed: {', '.join(missing)}",
            OFFLINE,
            essential=True,
            hint=f"pip install {' '.join(missing)}",
            details=details,
        )
    location = Path(str(resources.files("tailcast")))
    return Check(
        "packages",
        Status.OK,
        f"tailcast {own} at {location}; {len(found)} dependencies installed",
        OFFLINE,
        essential=True,
        details=details,
    )


def _wheel_tags() -> list[str]:
    try:
        text = metadata.distribution("tailcast").read_text("WHEEL") or ""
    except metadata.PackageNotFoundError:
        return []
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]


def engine_check() -> Check:
    needed = ("replay run", "the native squeue scanner", *OFFLINE)
    try:
        from tailcast import _core
    except ImportError as exc:
        return Check(
            "engine",
            Status.MISSING,
            f"tailcast._core does not import ({exc})",
            needed,
            essential=True,
            hint="install the tailcast wheel (no Rust needed), or `make install`",
        )
    tags = _wheel_tags()
    built = f"wheel {', '.join(tags)}" if tags else "no wheel metadata"
    return Check(
        "engine",
        Status.OK,
        f"replay engine {_core.engine_version()} ({built})",
        needed,
        essential=True,
        details={"version": _core.engine_version(), "file": _core.__file__, "wheel_tags": tags},
    )


def replay_check(timeout: float) -> Check:
    """Replays the bundled 4-rank trace in a child process, the way a user would: proof that
    the engine, pyarrow and the CLI work together (a crash stays in the child)."""
    trace = Path(str(resources.files("tailcast").joinpath(*BUNDLED_TRACE)))
    argv = [
        sys.executable,
        "-m",
        "tailcast",
        "replay",
        "run",
        str(trace),
        "--fabric",
        "ideal",
        "--no-store",
        "--json",
    ]
    if not trace.is_file():
        return Check(
            "replay",
            Status.MISSING,
            f"bundled trace {trace} is missing",
            OFFLINE,
            essential=True,
            hint="reinstall tailcast",
        )
    started = time.monotonic()
    probe = run_probe(argv, timeout)
    seconds = time.monotonic() - started
    if not probe.ok:
        return Check(
            "replay",
            Status.ERROR,
            probe.why(),
            OFFLINE,
            essential=True,
            hint="run the command with --debug for the traceback",
        )
    try:
        summary = json.loads(probe.stdout)
        actions, total_us = int(summary["actions"]), float(summary["total_time_us"])
    except (ValueError, KeyError, TypeError) as exc:
        return Check(
            "replay", Status.ERROR, f"unreadable replay summary ({exc})", OFFLINE, essential=True
        )
    return Check(
        "replay",
        Status.OK,
        f"bundled {summary.get('ranks')}-rank trace: {actions} actions replayed in "
        f"{seconds:.1f} s (simulated {total_us:.1f} us)",
        OFFLINE,
        essential=True,
        details={
            "trace": str(trace),
            "actions": actions,
            "total_time_us": total_us,
            "seconds": round(seconds, 3),
        },
    )


def _existing_ancestor(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path("/")


def _store_usage(root: Path) -> tuple[int, int, bool]:
    """(files, bytes, complete): stops counting after STORE_WALK_LIMIT files."""
    files = size = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            try:
                size += (Path(dirpath) / name).stat().st_size
            except OSError:
                continue
            files += 1
            if files >= STORE_WALK_LIMIT:
                return files, size, False
    return files, size, True


def store_check() -> Check:
    """The results store: where it is, whether this user can write there, how big it is."""
    root = results_home()
    needed = ("storing results (replay run, agent, collect, quickstart)", "db", "analyze")
    base = _existing_ancestor(root)
    if not base.is_dir():
        return Check(
            "store",
            Status.ERROR,
            f"{root}: {base} is not a directory",
            needed,
            essential=True,
            hint="point $TAILCAST_HOME at a writable directory",
            details={"path": str(root)},
        )
    try:  # a real write, not os.access: root, ACLs and read-only mounts all answer truly
        fd, probe_file = tempfile.mkstemp(prefix=".tailcast-doctor-", dir=base)
        os.close(fd)
        os.unlink(probe_file)
    except OSError as exc:
        return Check(
            "store",
            Status.ERROR,
            f"{root}: cannot write in {base} ({exc.strerror})",
            needed,
            essential=True,
            hint="point $TAILCAST_HOME at a writable directory",
            details={"path": str(root)},
        )
    files, size, complete = _store_usage(root) if root.is_dir() else (0, 0, True)
    free = shutil.disk_usage(base).free
    state = "writable" if root.is_dir() else f"not created yet ({base} is writable)"
    count = f"{files}{'' if complete else '+'} files"
    return Check(
        "store",
        Status.OK,
        f"{root}: {state}, {count}, {size / 1e6:.1f} MB, {free / 1e9:.1f} GB free",
        needed,
        essential=True,
        details={
            "path": str(root),
            "exists": root.is_dir(),
            "files": files,
            "bytes": size,
            "complete": complete,
            "free_bytes": free,
        },
    )
