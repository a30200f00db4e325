"""Mutation fuzzing of tailcast's text readers (issue 19 §5), shared by bench/fuzz_figures.py
(the bench's count per reader) and tests/reliability/test_fuzz_readers.py (a few thousand).

Each input is a real recorded file (tests/data, ../shared/data) mutated by a few random
edits: bytes flipped, inserted or deleted, lines dropped, duplicated or swapped, numbers
replaced by extreme ones, the text cut short. A reader may accept an input or raise a
TailcastError (typed, naming the file); any other exception is a crash, and an input that
takes longer than SLOW_S is a hang candidate.

Also the pieces every fuzzer shares: `Target` (a reader's seeds and its per-input step),
`FuzzCounts` (counting one input's outcome) and `run_inputs` (the loop, one random stream
per input so that input `i` of seed `s` can be replayed alone: bench/fuzz_chunks.py resumes
a chunk after an input that killed its process)."""

from __future__ import annotations

import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tailcast.agent.campaign import load_campaign
from tailcast.collectors.osu_parse import parse_osu_output
from tailcast.collectors.sinfo import parse_sinfo_nodes
from tailcast.collectors.squeue import parse_squeue_format, parse_squeue_json
from tailcast.collectors.topology import parse_scontrol_topology, parse_topology_toml
from tailcast.errors import TailcastError
from tailcast.replay.fabric import parse_fabric

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
FABRICS = REPO / "src" / "tailcast" / "replay" / "fabrics"
SLOW_S = 1.0
TOKENS = ["-1", "0", "1e308", "nan", "inf", "18446744073709551616", "\x00", "é", "[", "]",
          "{", "}", '"', ",", "|", "=", "node[1-99999999]", "node[", "#", "\n", "   ",
          "null"]  # fmt: skip


def _seeds() -> dict[str, list[str]]:
    slurm = DATA / "slurm-22.05"
    osu = sorted((DATA / "osu-7.4").glob("*.txt")) or sorted(
        Path("/work/shared/data/osu-7.4").glob("*.txt")
    )
    return {
        "osu_output": [p.read_text(errors="replace") for p in osu],
        "squeue_json": [(slurm / n).read_text() for n in ("squeue1.json", "squeue-mix.json")],
        "squeue_format": [(slurm / "squeue-format-shared.txt").read_text()],
        "sinfo_nodes": ["node01\nnode02\nnode03\nnode04\n", "c[001-128]\n"],
        "scontrol_topology": [(slurm / "scontrol-show-topology.txt").read_text()],
        "fabric_toml": [p.read_text() for p in sorted(FABRICS.glob("*.toml"))],
        "campaign_toml": [(REPO / "slurm_jobs" / "campaign.example.toml").read_text()],
        "topology_toml": [
            (REPO / "slurm_jobs" / "topology.example.toml").read_text(),
            '[islands.i0]\ng0 = "node[01-04]"\ng1 = "node[05-08]"\n'
            '[islands.i1]\ng2 = "node[09-12]"\ng3 = "node13,node14"\n',
        ],
    }


Step = Callable[[random.Random], object]  # mutates a seed with the rng and reads the mutant


@dataclass(frozen=True)
class Target:
    """A reader under fuzzing. `seeds(work)` builds its seed inputs once (in the bench's
    parent process: some need a compiler and an MPI run); `stepper(seeds, scratch)` gives the
    step run per input, in a process that owns `scratch` (where input files are written)."""

    seeds: Callable[[Path], Any]
    stepper: Callable[[Any, Path], Step]


READERS: dict[str, Callable[[str], Any]] = {
    "osu_output": lambda text: parse_osu_output(text, "fuzz.txt"),
    "squeue_json": lambda text: parse_squeue_json(text, "fuzz.json"),
    "squeue_format": lambda text: parse_squeue_format(text, "fuzz.txt"),
    "sinfo_nodes": lambda text: parse_sinfo_nodes(text, "fuzz.txt"),
    "scontrol_topology": lambda text: parse_scontrol_topology(text, "fuzz.txt"),
    "topology_toml": lambda text: parse_topology_toml(text, "fuzz.toml"),
    "fabric_toml": lambda text: parse_fabric(text, "fuzz.toml"),
    "campaign_toml": lambda text: text,  # load_campaign reads a file: see _text_stepper
}


def _text_stepper(reader: str) -> Callable[[list[str], Path], Step]:
    parse = READERS[reader]

    def stepper(seeds: list[str], scratch: Path) -> Step:
        if reader != "campaign_toml":
            return lambda rng: parse(mutate(rng.choice(seeds), rng))
        path = scratch / "campaign.toml"  # its paths are relative to it: a real file

        def campaign(rng: random.Random) -> object:
            path.write_text(mutate(rng.choice(seeds), rng), encoding="utf-8")
            return load_campaign(path)

        return campaign

    return stepper


def _text_seeds(reader: str, _work: Path) -> list[str]:
    return _seeds()[reader]


TARGETS = {name: Target(partial(_text_seeds, name), _text_stepper(name)) for name in READERS}


def mutate(text: str, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        if not text:
            text = rng.choice(TOKENS)
        pos = rng.randrange(len(text) + 1)
        if kind == 0:  # insert a token
            text = text[:pos] + rng.choice(TOKENS) + text[pos:]
        elif kind == 1:  # delete a span
            text = text[:pos] + text[pos + rng.randint(1, 64) :]
        elif kind == 2:  # flip one character
            text = text[:pos] + chr(rng.randrange(1, 0x250)) + text[pos + 1 :]
        elif kind == 3:  # cut short
            text = text[:pos]
        else:  # drop, duplicate or swap lines
            lines = text.split("\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if kind == 4:
                lines.insert(i, lines[j])
            else:
                lines[i], lines[j] = lines[j], lines[i]
                if rng.random() < 0.5:
                    del lines[i]
            text = "\n".join(lines)
    return text


@dataclass
class FuzzCounts:
    inputs: int = 0
    accepted: int = 0
    typed_errors: Counter[str] = field(default_factory=Counter)
    crashes: Counter[str] = field(default_factory=Counter)
    slow: int = 0  # inputs over SLOW_S
    max_input_s: float = 0.0
    examples: list[str] = field(default_factory=list)  # first crashing inputs: seed, index

    def attempt(self, read: Callable[[], object]) -> bool:
        """Feeds one input to `read` and counts the outcome and its time; False on a crash."""
        started = time.perf_counter()
        crashed = False
        try:
            read()
            self.accepted += 1
        except TailcastError as err:
            self.typed_errors[type(err).__name__] += 1
        except Exception as exc:  # a crash: the point of the fuzzer
            self.crashes[f"{type(exc).__name__}: {str(exc)[:80]}"] += 1
            crashed = True
        took = time.perf_counter() - started
        self.slow += took > SLOW_S
        self.max_input_s = max(self.max_input_s, took)
        self.inputs += 1
        return not crashed


def run_inputs(
    step: Step, seed: int, start: int, stop: int, counts: FuzzCounts,
    at: Callable[[int], None] = lambda _i: None,
) -> None:  # fmt: skip
    """Inputs `start`..`stop`-1 of `seed`; `at(i)` is told which one is about to run."""
    rng = random.Random()
    for i in range(start, stop):
        at(i)
        rng.seed(seed << 40 | i)  # input i's own stream: replayable without the ones before
        if not counts.attempt(partial(step, rng)) and len(counts.examples) < 5:
            counts.examples.append(f"seed {seed} input {i}")


def fuzz_target(target: Target, inputs: int, seed: int = 19) -> FuzzCounts:
    """`inputs` mutants read in this process (the tests' scale)."""
    counts = FuzzCounts()
    with tempfile.TemporaryDirectory(prefix="tailcast-fuzz-") as scratch:
        seeds = target.seeds(Path(scratch))
        if seeds:
            run_inputs(target.stepper(seeds, Path(scratch)), seed, 0, inputs, counts)
    return counts


def fuzz(reader: str, inputs: int, seed: int = 19) -> FuzzCounts:
    return fuzz_target(TARGETS[reader], inputs, seed)
