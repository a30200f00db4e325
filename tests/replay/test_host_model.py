"""The host model (crates/replay-engine/src/fabric/host.rs) is declared once: the eager
threshold's default exists in that declaration alone, every replay path that is given no
threshold uses it, and a fabric file gives host costs in its [host] table or, as files
before the table did, at its top level."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tailcast import _core
from tailcast.replay.fabric import FabricConfigError, load_fabric, parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tests.replay.conftest import osu_parquet

REPO = Path(__file__).resolve().parents[2]
DECLARATION = "crates/replay-engine/src/fabric/host.rs"
# Product files that carry the same number for another reason, and how often.
UNRELATED = {
    # Open MPI 4.1.4's decision tables: message-size boundaries of algorithm choices
    "collectives/decision.rs": 27,
    # seed 004's circuit threshold (Table IV), the photonic_hybrid model's own parameter
    "models/photonic_hybrid/mod.rs": 1,
    "fabrics/photonic-hybrid-butterfly.toml": 1,
    # a TiT trace line quoted in a comment (trace-formats' tit/token_cache.rs)
    "token_cache.rs": 1,
    # rows per Parquet page of a written trace
    "traces/layout.py": 1,
    # the packet engine's input buffer per port and VC (CODES dfp-test's vc sizes), in its
    # declaration and doc: a buffer, not a message size
    "packet/params.rs": 2,
}


def declared_default() -> int:
    """The default every model's description gives for host.eager_threshold_bytes."""
    found = {
        p["default"]
        for m in _core.fabric_models()
        for p in m["params"]
        if p["key"] == "host.eager_threshold_bytes"
    }
    assert len(found) == 1, found
    return int(found.pop())


def product_text(path: Path) -> str:
    """A file's text without its tests (Rust: from the first #[cfg(test)] on)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".rs":
        text = text.split("#[cfg(test)]", 1)[0]
    return text


def spellings(value: int) -> re.Pattern[str]:
    """The number as code may write it: 8192, 8_192, 1 << 13, 8 << 10, 8 * 1024."""
    digits = str(value)
    forms = [r"_?".join(digits)]
    if value & (value - 1) == 0:
        forms.append(rf"1\s*<<\s*{value.bit_length() - 1}")
    if value % 1024 == 0:
        forms += [rf"{value // 1024}\s*<<\s*10", rf"{value // 1024}\s*\*\s*1024"]
    return re.compile(r"(?<![\w.])(?:" + "|".join(forms) + r")(?![\w.])")


def test_the_eager_default_is_written_in_its_declaration_alone() -> None:
    default = declared_default()
    pattern = spellings(default)
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "crates", "src"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    counts: dict[str, int] = {}
    for name in listed:
        path = REPO / name
        test_file = "/tests/" in name or path.name == "tests.rs" or name.endswith("_tests.rs")
        if path.suffix not in (".rs", ".py", ".pyi", ".toml") or test_file:
            continue
        hits = len(pattern.findall(product_text(path)))
        if hits:
            counts[name] = hits
    assert counts.pop(DECLARATION, 0) == 1, f"{DECLARATION} must declare {default} once"
    for suffix, expected in UNRELATED.items():
        found = [n for n in counts if n.endswith(suffix)]
        assert len(found) <= 1 and counts.get(found[0] if found else "", 0) == expected, (
            suffix,
            found,
        )
        for n in found:
            del counts[n]
    assert counts == {}, f"the eager default {default} is written again in {counts}"


def test_python_and_the_cli_leave_the_threshold_to_the_host_model(tmp_path: Path) -> None:
    # Neither the options nor the command repeat a number: None means the host model's.
    from tailcast.cli import replay as cli

    assert ReplayOptions().eager_threshold_bytes is None
    assert inspect.signature(cli.run).parameters["eager_threshold"].default is None
    default = declared_default()
    # Alltoall blocks of exactly the threshold are eager, one byte more rendezvous.
    trace = osu_parquet(tmp_path, "alltoall", 4, default)
    crossbar = load_fabric("crossbar")
    given = replay_trace(trace, crossbar, ReplayOptions(eager_threshold_bytes=default))
    left = replay_trace(trace, crossbar, ReplayOptions())
    lower = replay_trace(trace, crossbar, ReplayOptions(eager_threshold_bytes=default - 1))
    assert left.total_time_ns == given.total_time_ns != lower.total_time_ns
    # The command: no --eager-threshold replays as the declared value does.
    argv = [sys.executable, "-m", "tailcast", "replay", "run", str(trace), "--fabric"]
    env = dict(os.environ, TAILCAST_HOME=str(tmp_path / "home"))

    def command(*extra: str) -> dict[str, object]:
        done = subprocess.run(
            [*argv, "crossbar", "--no-store", "--json", *extra],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        out = json.loads(done.stdout)
        out.pop("replay_id")
        out.pop("timing")
        return dict(out)

    assert command() == command("--eager-threshold", str(default))


def test_the_host_table_sets_the_threshold_and_the_replay_overrides_it(tmp_path: Path) -> None:
    default = declared_default()
    trace = osu_parquet(tmp_path, "alltoall", 4, default)
    # The bundled file ends with its [host] table: one more key of it.
    text = load_fabric("crossbar").toml_text
    lower = parse_fabric(text + f"eager_threshold_bytes = {default - 1}\n", "<lower>")
    assert lower.table["host"]["eager_threshold_bytes"] == default - 1
    crossbar = load_fabric("crossbar")
    as_option = replay_trace(trace, crossbar, ReplayOptions(eager_threshold_bytes=default - 1))
    assert replay_trace(trace, lower, ReplayOptions()).total_time_ns == as_option.total_time_ns
    back = replay_trace(trace, lower, ReplayOptions(eager_threshold_bytes=default))
    assert back.total_time_ns == replay_trace(trace, crossbar, ReplayOptions()).total_time_ns


def test_host_keys_at_the_top_level_are_read_as_the_table_and_once(tmp_path: Path) -> None:
    trace = osu_parquet(tmp_path, "allreduce", 4, 1 << 16)
    head = "model = 'alpha_beta'\nalpha_us = 1.0\nbeta_ns_per_byte = 0.1\n"
    table = parse_fabric(head + "[host]\noverhead_ns = 250.0\ngamma_ns_per_byte = 0.5\n", "t")
    flat = parse_fabric(head + "overhead_ns = 250.0\ngamma_ns_per_byte = 0.5\n", "f")
    options = ReplayOptions()
    times = [replay_trace(trace, f, options).total_time_ns for f in (table, flat)]
    assert (
        times[0] == times[1] > replay_trace(trace, parse_fabric(head, "h"), options).total_time_ns
    )
    # LogGP's letters: o_ns is the host's overhead_ns.
    loggp = "model = 'loggp'\nL_ns = 1000.0\nG_ns_per_byte = 0.1\n"
    letters = parse_fabric(loggp + "o_ns = 250.0\n", "letters")
    named = parse_fabric(loggp + "[host]\noverhead_ns = 250.0\n", "named")
    assert replay_trace(trace, letters, options).total_time_ns == (
        replay_trace(trace, named, options).total_time_ns
    )
    with pytest.raises(FabricConfigError, match=r"key overhead_ns: .*given twice.*host\."):
        parse_fabric(head + "overhead_ns = 1.0\n[host]\noverhead_ns = 2.0\n", "twice.toml")
    with pytest.raises(FabricConfigError, match=r"key gamma_ns_per_byte: expected a number"):
        parse_fabric(head + "gamma_ns_per_byte = -1.0\n", "negative.toml")
