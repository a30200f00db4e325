"""b-sweep campaigns: the phase plan, the rendered scripts and campaign-file errors."""

from __future__ import annotations

import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tailcast.agent.bsweep_spec import BackgroundSpec, plan_phases, split_sizes
from tailcast.agent.bsweep_submit import render_sweep
from tailcast.agent.campaign import campaign_topology, load_campaign
from tailcast.collectors.topology import load_topology_toml
from tailcast.errors import InputError, UsageError

REPO = Path(__file__).resolve().parents[2]
TOPO = load_topology_toml(REPO / "slurm_jobs" / "topology.example.toml")


@pytest.mark.parametrize("total", range(2, 13))
def test_split_sizes_adds_up_without_single_node_jobs(total: int) -> None:
    for seed in range(20):
        sizes = split_sizes(total, [2, 3, 4], random.Random(seed))
        assert sum(sizes) == total and min(sizes) >= 2


def test_plan_covers_every_level_and_placement_in_shuffled_order() -> None:
    spec = BackgroundSpec(levels=[0.0, 0.3, 0.6], repeats=2, seed=5)
    phases = plan_phases(spec.levels, ["same_group", "different_islands"], spec, TOPO, 4)
    combos = Counter((p.level, p.placement) for p in phases)
    assert len(phases) == 12 and set(combos.values()) == {2}
    assert [(p.level, p.placement) for p in phases] != sorted(
        (p.level, p.placement) for p in phases
    )
    for p in phases:
        bg = [n for job in p.background for n in job]
        assert len(bg) == len(set(bg)) and not set(bg) & set(p.measure_nodes)
        assert all(len(job) >= 2 for job in p.background)
        assert p.expected_b == pytest.approx(round(p.level * 16) / 16)
    again = plan_phases(spec.levels, ["same_group", "different_islands"], spec, TOPO, 4)
    assert again == phases  # seeded: the same plan every time


def test_level_that_does_not_fit_is_a_usage_error() -> None:
    spec = BackgroundSpec(levels=[0.9])
    with pytest.raises(UsageError, match="needs 14 nodes"):
        plan_phases(spec.levels, ["same_group"], spec, TOPO, 4)


def test_example_sweep_renders_background_measure_scripts(tmp_path: Path) -> None:
    for name in ("bsweep.example.toml", "topology.example.toml"):
        shutil.copy(REPO / "slurm_jobs" / name, tmp_path / name)
    camp = load_campaign(tmp_path / "bsweep.example.toml")
    assert camp.background is not None and camp.background.levels[-1] == 0.6
    phases = render_sweep(camp, campaign_topology(camp))
    assert len(phases) == 7 * 2 * 2
    loaded = [p for p in phases if p.background]
    first = loaded[0]
    assert "exec tailcast agent noise --pattern alltoall --size 65536 --pause-ms 2" in (
        first.background[0].script
    )
    assert "#SBATCH --ntasks-per-node=1\n" in first.background[0].script
    assert "sleep 3  # b-sweep phase" in first.measure.script
    assert "--benchmarks bcast,reduce,alltoall --sizes 4,32K" in first.measure.script
    quiet = next(p for p in phases if not p.background)
    assert "sleep" not in quiet.measure.script


def test_background_table_errors_name_file_and_key(tmp_path: Path) -> None:
    base = (REPO / "slurm_jobs" / "bsweep.example.toml").read_text()
    shutil.copy(REPO / "slurm_jobs" / "topology.example.toml", tmp_path)
    bad = tmp_path / "bad.toml"
    for text, message in [
        (base.replace("levels = [0.0", "levls = [0.0"), "unknown \\[background\\] keys"),
        (base.replace("levels = [0.0", "levels = [1.5, 0.0"), "levels must lie in"),
        (base.replace("job_sizes = [2, 3, 4]", "job_sizes = [1]"), "job_sizes must be"),
        (base.replace('pattern = "alltoall"', 'pattern = "gather"'), "pattern must be one of"),
    ]:
        bad.write_text(text)
        with pytest.raises(InputError, match=message) as err:
            load_campaign(bad)
        assert str(bad) in str(err.value)
