"""Every `tailcast …` command shown in README.md's code blocks, and every TOML block there.

Commands that can run offline on bundled data run, as written: optional `[…]` parts are left
out unless the table below keeps one (then that alternative of it is used), and
placeholders (app.parquet, ID, REPLAY_ID, …) become real files and ids made here. They run
in a store holding the quickstart's bundled campaign. Commands that need Slurm, MPI, the
network lab, a user's own files or a long-running service are only checked for syntax: the
sub-command exists and accepts every option the README shows. Which ones, and why, is the
SYNTAX_ONLY table; a README command in neither table fails the test, so a new example is
classified when it is added."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer._click import Command  # typer's own click (typer ≥ 0.26 depends on none)
from typer.core import TyperGroup

from tailcast.quickstart import BUNDLED_TABLES, bundled_dir

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
HALO = bundled_dir() / "halo-4rank.parquet"
TOPOLOGY = REPO / "slurm_jobs" / "topology.example.toml"
SWEEP = REPO / "slurm_jobs" / "sweep.example.toml"

# README command (its first words, enough to tell it apart) → why it is only syntax-checked.
SYNTAX_ONLY: dict[str, str] = {
    "tailcast collect snapshot": "reads the live Slurm queue (squeue, sinfo)",
    "tailcast collect watch": "reads the live Slurm queue for a day",
    "tailcast collect osu": "needs the user's saved OSU outputs",
    "tailcast agent run": "runs MPI benchmarks inside a Slurm job",
    "tailcast agent submit slurm_jobs/bsweep": "submits Slurm jobs (sbatch)",
    "tailcast agent noise --pattern": "runs inside a Slurm background job (MPI)",
    "tailcast trace capture": "runs an MPI program under mpirun/srun",
    "tailcast trace convert traces.otf2": "needs the user's OTF2 archive",
    "tailcast replay sweep run spec.toml --slurm": "submits a Slurm job array",
    "tailcast analyze plot": "a family of commands ('...': each needs its own arguments)",
    "tailcast predict tail ... --simulate": "'...': the tail arguments shown above it",
    "tailcast predict serve": "a service that runs until stopped (tests/forecast test it)",
    "tailcast lab calibrate": "needs the network lab (Slurm in network namespaces)",
    "tailcast lab campaign": "needs the network lab (Slurm in network namespaces)",
    "tailcast lab tails": "needs the network lab's campaign in the store",
    "tailcast lab compare": "needs the network lab's campaign in the store",
}


@dataclass(frozen=True)
class Runnable:
    keep: tuple[str, ...] = ()  # options of optional groups to keep
    subs: dict[str, str] = field(default_factory=dict)  # placeholder → value key or text


# README command prefix → how it runs. Values in `subs` in {braces} come from the fixture.
RUNNABLE: dict[str, Runnable] = {
    "tailcast doctor": Runnable(),
    "tailcast collect topology": Runnable(("--file",), {"topo.toml": "{topology}"}),
    "tailcast agent submit slurm_jobs/campaign": Runnable(("--dry-run",)),
    "tailcast agent noise-profile": Runnable(("--seconds", "--local")),
    "tailcast trace convert t.parquet": Runnable(subs={"t.parquet": "{trace}", "t.tit": "{tit}"}),
    "tailcast trace info": Runnable(subs={"t.parquet": "{trace}"}),
    "tailcast trace validate": Runnable(subs={"t.parquet": "{trace}"}),
    "tailcast trace synth osu": Runnable(subs={"osu.parquet": "{tmp}/osu.parquet"}),
    "tailcast trace synth all2all": Runnable(subs={"w.parquet": "{tmp}/w.parquet"}),
    "tailcast trace synth poisson": Runnable(subs={"p.parquet": "{tmp}/p.parquet"}),
    "tailcast replay fabrics": Runnable(),
    "tailcast replay budget": Runnable(),
    "tailcast replay run app.parquet --fabric tree": Runnable(subs={"app.parquet": "{halo}"}),
    "tailcast replay schedule": Runnable(),
    "tailcast replay run app.parquet --fabric marconi100": Runnable(subs={"app.parquet": "{halo}"}),
    "tailcast replay sweep run spec.toml [--jobs": Runnable(subs={"spec.toml": "{sweep_spec}"}),
    "tailcast replay sweep status": Runnable(subs={"ID": "{sweep_id}"}),
    "tailcast replay sweep resume": Runnable(subs={"ID": "{sweep_id}"}),
    "tailcast replay sweep cancel": Runnable(subs={"ID": "{sweep_id}"}),
    "tailcast replay sweep run slurm_jobs/sweep": Runnable(),
    "tailcast analyze tails SWEEP_ID": Runnable(subs={"SWEEP_ID": "{sweep_id}"}),
    'tailcast analyze tails "SELECT': Runnable(),
    "tailcast analyze fit": Runnable(),
    "tailcast analyze bimodality": Runnable(),
    "tailcast analyze correlate": Runnable(),
    "tailcast analyze compare": Runnable(subs={"REPLAY_ID": "{replay_id}"}),
    "tailcast report": Runnable(subs={"report/": "{tmp}/report/"}),
    "tailcast predict train": Runnable(),
    "tailcast predict evaluate": Runnable(),
    "tailcast predict tail --benchmark": Runnable(
        ("--locality", "--b"), {"…": "different_islands"}
    ),
    "tailcast predict install-cli-filter": Runnable(
        ("--out",), {"cli_filter.lua": "{tmp}/cli_filter.lua"}
    ),
    "tailcast db tables": Runnable(),
    "tailcast db sql": Runnable(),
    "tailcast calibrate": Runnable(subs={"lab-cal.toml": "{tmp}/lab-cal.toml"}),
}


def readme_blocks() -> list[tuple[str, str]]:
    """(language, text) of README's fenced code blocks."""
    return re.findall(r"```([a-z]*)\n(.*?)```", README.read_text(), re.S)


def readme_commands() -> list[str]:
    """Each `tailcast …` command of the code blocks: continuation lines joined, trailing
    comments dropped, `a ; b` split."""
    out = []
    for _, block in readme_blocks():
        lines = block.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            for part in line.split(" ; "):
                text = re.sub(r"\s+#.*$", "", part).strip()
                if text.startswith("tailcast "):
                    out.append(re.sub(r"\s+", " ", text))
    return out


def _classify(command: str) -> tuple[str, Runnable | str]:
    runs = [p for p in RUNNABLE if command.startswith(p)]
    syntax = [p for p in SYNTAX_ONLY if command.startswith(p)]
    assert len(runs) + len(syntax) == 1, f"classify this README command once: {command}"
    return ("run", RUNNABLE[runs[0]]) if runs else ("syntax", SYNTAX_ONLY[syntax[0]])


def _groups(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each top-level optional `[…]` group (a `[` after a space)."""
    i = 0
    while i < len(text):
        if text[i] == "[" and (i == 0 or text[i - 1] == " "):
            depth = 0
            for j in range(i, len(text)):
                depth += {"[": 1, "]": -1}.get(text[j], 0)
                if depth == 0:
                    yield i, j + 1
                    i = j
                    break
        i += 1


def instantiate(command: str, how: Runnable, values: dict[str, str]) -> list[list[str]]:
    """The argvs the README command runs as (without the leading `tailcast`): one, or one
    per alternative of an `a|b|c` argument."""
    text = command
    for start, end in reversed(list(_groups(command))):
        inner = command[start + 1 : end - 1]
        chosen = ""
        for alternative in inner.split("|"):
            if any(re.search(rf"(^|\s){re.escape(k)}(\s|=|$)", alternative) for k in how.keep):
                chosen = alternative.strip()
        text = text[:start] + chosen + text[end:]
    for placeholder, value in how.subs.items():
        text = re.sub(
            rf"(?<![\w/.]){re.escape(placeholder)}(?![\w.])", value.format(**values), text
        )
    argv = shlex.split(text)[1:]
    choices = [i for i, w in enumerate(argv) if "|" in w and not w.startswith(("-", "SELECT"))]
    if not choices:
        return [argv]
    i = choices[0]
    return [[*argv[:i], w, *argv[i + 1 :]] for w in argv[i].split("|")]


def _options_shown(command: str) -> list[str]:
    """Options the command shows: words that start with `-` (inside `[…]` and `a|b` too),
    up to a `=`; quoted arguments are one word."""
    shown = set()
    for word in shlex.split(command.replace("…", "x")):
        for part in word.strip("[]").split("|"):
            part = part.strip("[]")
            if re.match(r"^--?[a-z]", part):
                shown.add(part.split("=")[0])
    return sorted(shown)


def _resolve(words: list[str]) -> list[Command]:
    """The command(s) the leading words name (an `a|b|c` word: each of them)."""
    import typer.main

    from tailcast.cli.main import app

    current: list[Command] = [typer.main.get_command(app)]
    for word in words:
        if word.startswith("-") or not all(isinstance(c, TyperGroup) for c in current):
            break
        names = word.split("|")
        groups = [c for c in current if isinstance(c, TyperGroup)]
        if not all(n in g.commands for g in groups for n in names):
            break
        current = [g.commands[n] for g in groups for n in names]
    return current


COMMANDS = readme_commands()


def test_readme_commands_are_all_classified() -> None:
    assert len(COMMANDS) > 40
    kinds = [_classify(c)[0] for c in COMMANDS]
    # the sub-commands of this task's scope run, not just parse
    in_scope = (
        "tailcast predict train",
        "tailcast predict tail --benchmark",
        "tailcast replay sweep run slurm_jobs",
        "tailcast analyze tails SWEEP_ID",
    )
    for prefix in in_scope:
        assert any(
            k == "run" and c.startswith(prefix) for c, k in zip(COMMANDS, kinds, strict=True)
        )
    unused = [p for p in (*RUNNABLE, *SYNTAX_ONLY) if not any(c.startswith(p) for c in COMMANDS)]
    assert not unused, f"no README command starts with {unused}: drop them from the tables"


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_options_exist(command: str) -> None:
    """Every option the README shows is one the sub-command accepts."""
    words = shlex.split(command.replace("…", "x"))[1:]
    targets = _resolve(words)
    for target in targets:
        # a group without sub-commands is a command of its own (`doctor`, `report`)
        assert not (isinstance(target, TyperGroup) and target.commands), f"{command}: no command"
        accepted = {o for p in target.params for o in (*p.opts, *p.secondary_opts)}
        missing = [o for o in _options_shown(command) if o not in accepted and o != "--"]
        # `trace capture -o app.parquet -- mpirun -np 64 ./app`: after `--` is the program
        if " -- " in command:
            shown_before = _options_shown(command.split(" -- ")[0])
            missing = [o for o in missing if o in shown_before]
        assert not missing, f"{command}: {target.name} has no {missing}"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with the quickstart's bundled campaign, a trace, a stored replay and a sweep."""
    tmp = tmp_path_factory.mktemp("readme")
    # Commands run in `tmp` on a copy of slurm_jobs/: what they write beside a spec (agent
    # submit --dry-run renders its jobs there) stays out of the checkout.
    shutil.copytree(REPO / "slurm_jobs", tmp / "slurm_jobs")
    home = tmp / "home"
    for table in BUNDLED_TABLES:
        shutil.copytree(bundled_dir() / table, home / table)
    values = {
        "tmp": str(tmp),
        "home": str(home),
        "halo": str(HALO),
        "topology": str(tmp / "slurm_jobs" / TOPOLOGY.name),
        "sweep_spec": str(tmp / "slurm_jobs" / SWEEP.name),
        "trace": str(tmp / "t.parquet"),
        "tit": str(tmp / "t.tit"),
    }
    _tailcast(values, "trace", "synth", "osu", "--collective", "bcast", "-n", "4", "--sizes",
              "1K", "--iterations", "10", "-o", values["trace"])  # fmt: skip
    replay = _tailcast(values, "replay", "run", str(HALO), "--fabric", "crossbar", "--json")
    values["replay_id"] = __import__("json").loads(replay.stdout)["replay_id"]
    sweep = _tailcast(
        values, "replay", "sweep", "run", values["sweep_spec"], "--jobs", "2", "--json"
    )
    values["sweep_id"] = __import__("json").loads(sweep.stdout)["sweep_id"]
    return values


def _tailcast(values: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAILCAST_HOME": values["home"], "SLURM_CONF": values["tmp"] + "/none"}
    proc = subprocess.run(
        [sys.executable, "-m", "tailcast", *argv],
        capture_output=True, text=True, env=env, cwd=values["tmp"], timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, (
        f"tailcast {shlex.join(argv)} exited {proc.returncode}:\n{proc.stderr}"
    )
    return proc


RUN = [c for c in COMMANDS if _classify(c)[0] == "run"]


@pytest.mark.slow
@pytest.mark.parametrize("command", RUN)
def test_readme_command_runs(command: str, workspace: dict[str, str]) -> None:
    how = _classify(command)[1]
    assert isinstance(how, Runnable)
    for argv in instantiate(command, how, workspace):
        assert not [a for a in argv if a.startswith("[")], argv
        _tailcast(workspace, *argv)


def test_readme_toml_blocks_parse() -> None:
    """TOML shown in README parses (none is shown today: the examples live as files in
    slurm_jobs/ and are run by tests/sweeps and tests/agent)."""
    for language, block in readme_blocks():
        if language == "toml":
            tomllib.loads(block)


def test_instantiate_keeps_only_the_chosen_alternative() -> None:
    command = (
        "tailcast predict tail --benchmark alltoall --size 1M [--nodes 16] "
        "[--nodelist …|--locality …] [--b 0.6 | --snapshot ID] [--json]"
    )
    [argv] = instantiate(command, RUNNABLE["tailcast predict tail --benchmark"], {})
    assert argv == ["predict", "tail", "--benchmark", "alltoall", "--size", "1M",
                    "--locality", "different_islands", "--b", "0.6"]  # fmt: skip
    synth = "tailcast trace synth all2all|shift -o w.parquet"
    argvs = instantiate(synth, RUNNABLE["tailcast trace synth all2all"], {"tmp": "/t"})
    assert argvs == [["trace", "synth", k, "-o", "/t/w.parquet"] for k in ("all2all", "shift")]
