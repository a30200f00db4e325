"""Campaign rendering: golden sbatch scripts for slurm_jobs/campaign.example.toml, placement
options, SBATCH_* scrubbing and campaign-file errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tailcast.agent.campaign import (
    campaign_topology,
    load_campaign,
    render_campaign,
    render_collector,
)
from tailcast.collectors.slurm_jobs import scrubbed_env
from tailcast.errors import InputError

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
PLACEHOLDER = "@TOPOLOGY@"


@pytest.fixture()
def campaign_file(tmp_path: Path) -> Path:
    for name in ("campaign.example.toml", "topology.example.toml"):
        shutil.copy(REPO / "slurm_jobs" / name, tmp_path / name)
    return tmp_path / "campaign.example.toml"


def test_rendered_scripts_match_golden(campaign_file: Path) -> None:
    camp = load_campaign(campaign_file)
    jobs = render_campaign(camp, campaign_topology(camp))
    collector = render_collector(camp)
    assert collector is not None
    jobs.append(collector)
    assert len(jobs) == 3 * 3 + 1
    topo_path = str(campaign_file.parent / "topology.example.toml")
    for job in jobs:
        text = job.script.replace(topo_path, PLACEHOLDER)
        golden = GOLDEN / f"{job.name}.sbatch"
        if os.environ.get("TAILCAST_UPDATE_GOLDEN") == "1":
            golden.write_text(text)
        assert text == golden.read_text(), job.name


def test_placements_in_scripts(campaign_file: Path) -> None:
    camp = load_campaign(campaign_file)
    scripts = {
        (j.placement, j.pattern): j.script for j in render_campaign(camp, campaign_topology(camp))
    }
    assert "#SBATCH --switches=1\n" in scripts[("same_group", "bcast")]
    assert "#SBATCH --nodelist=node[01-02,05-06]\n" in scripts[("same_island", "reduce")]
    assert "#SBATCH --nodelist=node[01,05,09,13]\n" in scripts[("different_islands", "alltoall")]
    assert "--benchmarks alltoall --sizes 4,1K,32K,1M" in scripts[("same_group", "alltoall")]
    assert all(s.startswith("#!/bin/bash\n") for s in scripts.values())


def test_without_topology_spread_job_and_same_island_refused(campaign_file: Path) -> None:
    text = campaign_file.read_text().replace('topology = "topology.example.toml"', "")
    text = text.replace('"same_group", "same_island", ', '"same_group", ')
    campaign_file.write_text(text)
    camp = load_campaign(campaign_file)
    jobs = render_campaign(camp, None)
    assert "#SBATCH --spread-job\n" in jobs[-1].script
    assert "--topology" not in jobs[-1].script


def test_env_values_are_shell_quoted(campaign_file: Path) -> None:
    text = campaign_file.read_text().replace(
        'env = { OMPI_MCA_btl = "self,vader,tcp" }', 'env = { NOTE = "a b; rm -rf /" }'
    )
    campaign_file.write_text(text)
    camp = load_campaign(campaign_file)
    script = render_campaign(camp, campaign_topology(camp))[0].script
    assert "export NOTE='a b; rm -rf /'\n" in script


def test_sbatch_variables_scrubbed() -> None:
    env = scrubbed_env({"SBATCH_PARTITION": "x", "SBATCH_TIMELIMIT": "1", "SLURM_CONF": "c"})
    assert env == {"SLURM_CONF": "c"}


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'patterns = ["bcast", "reduce", "alltoall"]',
            'patterns = ["bcast", "gather"]',
            "unknown patterns",
        ),
        ('"different_islands"]', '"far_away"]', "unknown placements"),
        ('sizes = ["4", "1K", "32K", "1M"]', 'sizes = ["4", "1Q"]', "bad message size"),
        ("nodes = 4 ", "nodes = 1 ", "nodes must be"),
        ("warmup = 100", "warmpu = 100", "unknown [campaign] keys ['warmpu']"),
        ("warmup = 100", "warmup = 100\nnoise_profile_s = -1", "noise_profile_s must be"),
    ],
)
def test_bad_campaign_is_input_error(campaign_file: Path, old: str, new: str, message: str) -> None:
    text = campaign_file.read_text()
    assert old in text
    campaign_file.write_text(text.replace(old, new))
    with pytest.raises(InputError) as err:
        load_campaign(campaign_file)
    assert message in err.value.reason and err.value.path == str(campaign_file)


def test_noise_profile_before_the_runs(campaign_file: Path) -> None:
    text = campaign_file.read_text().replace("warmup = 100", "warmup = 100\nnoise_profile_s = 2")
    campaign_file.write_text(text)
    camp = load_campaign(campaign_file)
    script = render_campaign(camp, campaign_topology(camp))[0].script
    profile = script.index("tailcast agent noise-profile --seconds 2\n")
    assert profile < script.index("exec tailcast agent run")


def test_toml_syntax_error_names_line(campaign_file: Path) -> None:
    lines = campaign_file.read_text().splitlines()
    lines[6] = "nodes = = 4"
    campaign_file.write_text("\n".join(lines))
    with pytest.raises(InputError) as err:
        load_campaign(campaign_file)
    assert err.value.line == 7
