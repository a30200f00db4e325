"""Golden transcripts of `tailcast replay run --json` (SimGrid's tesh habit).

Every bundled fabric replays four cases: an OSU-pattern trace (alltoall, 8 ranks, 4 B /
32 KiB / 1 MiB), the captured halo trace, the OSU trace beside a synthetic background job,
and the OSU trace under background sized from b. The transcript is the command's JSON with
the fields that change from run to run removed (`replay_id`, `timing`) and the trace path
made relative; a refused case records its exit code and error line instead. A model change
shows up as a diff of these files, reviewed and re-blessed only through
`scripts/bless-golden`, whose commit says why the numbers moved.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
OSU = GOLDEN / "osu-alltoall-8.parquet"
HALO = REPO / "src" / "tailcast" / "data" / "quickstart" / "halo-4rank.parquet"
FABRICS = REPO / "src" / "tailcast" / "replay" / "fabrics"
TAILCAST = Path(sys.executable).with_name("tailcast")


@dataclass(frozen=True)
class Case:
    name: str
    trace: Path
    extra: tuple[str, ...] = ()


CASES = (
    Case("osu", OSU),
    Case("halo", HALO),
    Case("osu-background", OSU, ("--background", "uniform:nodes=4:load=0.5:bytes=64K")),
    Case("osu-b", OSU, ("--background-b", "0.3", "--background-bytes", "256K")),
)


def fabrics() -> list[str]:
    return sorted(p.stem for p in FABRICS.glob("*.toml"))


def golden_path(fabric: str, case: Case) -> Path:
    return GOLDEN / f"{fabric}--{case.name}.json"


def transcript(fabric: str, case: Case, home: Path) -> str:
    """The replay's JSON minus what varies between identical runs, as sorted text."""
    argv = [str(TAILCAST), "replay", "run", str(case.trace), "--fabric", fabric, "--no-store"]
    env = dict(os.environ, TAILCAST_HOME=str(home))
    done = subprocess.run(
        [*argv, *case.extra, "--json"], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        record: dict[str, object] = {"exit": done.returncode, "stderr": done.stderr.strip()}
    else:
        record = json.loads(done.stdout)
        record.pop("replay_id", None)
        record.pop("timing", None)
        record["trace"] = str(case.trace.relative_to(REPO))
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def bless(home: Path) -> list[Path]:
    """Rewrites every golden file; returns those whose text changed."""
    changed = []
    for fabric in fabrics():
        for case in CASES:
            path = golden_path(fabric, case)
            text = transcript(fabric, case, home)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                changed.append(path)
    return changed


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["--bless"]:
        sys.exit("usage: python -m tests.replay.golden_cases --bless")
    with tempfile.TemporaryDirectory() as tmp:
        for p in bless(Path(tmp)):
            print(f"re-blessed {p.relative_to(REPO)}")
