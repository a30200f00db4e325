"""Seed 002's photonic segment switching through the whole replay path (issue 14): the
seed's synthetic workload, as a tailcast trace, replays on the bundled 12x12x12 torus and
12-ary 3-tree in every switching mode; every message arrives, nothing stays reserved, and
a bad key is named."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tailcast.replay.fabric import FabricConfigError, bundled_fabrics, load_fabric, parse_fabric
from tailcast.replay.run import replay_trace
from tailcast.replay.scenario import ReplayOptions
from tailcast.traces.io import TraceMeta, write_trace
from tailcast.traces.synth import seed002_mix_trace

FABRICS = ("photonic-segment-torus-12", "photonic-segment-fat-tree-12")


@pytest.fixture(scope="module")
def seed002_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed002") / "mix.parquet"
    table = seed002_mix_trace(64, messages=20, seed=3)
    write_trace(table, path, TraceMeta(ranks=64, application="seed002-mix"))
    return path


@pytest.mark.parametrize("name", FABRICS)
def test_seed002_workload_replays_in_every_mode(seed002_trace: Path, name: str) -> None:
    text = bundled_fabrics()[name]
    totals = {}
    for mode in ("circuit", "packet", "segment"):
        fabric = parse_fabric(re.sub(r'switching = "\w+"', f'switching = "{mode}"', text), name)
        out = replay_trace(seed002_trace, fabric, ReplayOptions(placement="random"))
        s = out.fabric_stats
        assert s["channels_held"] == 0 and s["buffer_entries_held"] == 0, s
        # 64 ranks x 20 messages; packets: 4 KB ones whole, 512 KB ones in 128 (or 1).
        assert out.messages is not None and out.messages.num_rows == 64 * 20
        assert (
            s["packets_buffered_0"]
            + s["packets_buffered_1"]
            + s["packets_buffered_2"]
            + s["packets_buffered_3plus"]
            == s["packets"]
        )
        totals[mode] = out.total_time_ns
        if mode == "circuit":
            assert s["packets"] == 64 * 20
    assert all(t > 0 for t in totals.values())


def test_a_wrong_key_is_named(tmp_path: Path) -> None:
    text = bundled_fabrics()[FABRICS[0]].replace("buffer_every = 1", "buffer_every = -1")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(FabricConfigError, match=r"topology\.buffer_every"):
        load_fabric(bad)
