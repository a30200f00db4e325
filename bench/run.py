"""`make bench`: runs every bench/*_bench.py and collects their JSON into bench/results/.

Each bench module defines `run() -> dict` (figures with units in key names); this driver adds
machine facts and writes bench/results/<name>.json atomically. Benchmarks are not tests: they
report numbers, they do not pass or fail, except when they crash.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

# Before any bench imports numpy: OpenBLAS worker threads spin after numpy calls and their
# CPU time lands in the benchmarks' process_time (~10 % of a replay measurement).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def machine() -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
    }


def main(selected: list[str]) -> int:
    RESULTS.mkdir(parents=True, exist_ok=True)
    failed = 0
    for path in sorted(HERE.glob("*_bench.py")):
        name = path.stem.removesuffix("_bench")
        if selected and name not in selected:
            continue
        spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        started = time.perf_counter()
        try:
            figures = module.run()
        except Exception as exc:  # report and continue with the other benchmarks
            print(f"bench {name}: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed += 1
            continue
        doc = {
            "benchmark": name,
            "recorded_at": datetime.now(UTC).isoformat(),
            "wall_s": round(time.perf_counter() - started, 3),
            "machine": machine(),
            "results": figures,
        }
        out = RESULTS / f"{name}.json"
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(doc, indent=2) + "\n")
        tmp.replace(out)
        print(f"bench {name}: {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
