"""Trained forecasters on disk: `$TAILCAST_HOME/models/<name>/model.skops` (the fitted
estimators, skops format: loading never unpickles arbitrary code) and `model.json` (the
metadata record: training query, features, data range, scores, versions, tail thresholds,
residual quantiles of the bands and the topology the features used).

Both files are written atomically, the metadata last and carrying the model file's SHA-256,
so a visible model.json always names the model file it belongs to.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tailcast.collectors.topology import Topology
from tailcast.errors import InputError, UsageError
from tailcast.forecast.dataset import TARGETS
from tailcast.forecast.features import FEATURES
from tailcast.forecast.models import QUANTILES, Forecaster
from tailcast.store import ResultsDir
from tailcast.store.parquet_io import atomic_path

MODEL_FILE = "model.skops"
META_FILE = "model.json"
DEFAULT_MODEL = "tail"
FORMAT_VERSION = 2  # 2: one centre per target and its residual quantiles
# Types a model file may hold; anything else is refused before loading. (HistGradientBoosting
# keeps a functools.partial of sklearn's check_array; what a partial wraps is itself a listed
# type, so it stays checked.)
_TRUSTED_PREFIXES = ("sklearn.", "numpy.", "builtins.")
_TRUSTED_NAMES = ("functools.partial",)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def model_dir(name: str = DEFAULT_MODEL, results: ResultsDir | None = None) -> Path:
    if not _NAME.match(name):
        raise UsageError(f"model name {name!r}: use letters, digits, '_', '.', '-'")
    return (results or ResultsDir()).root / "models" / name


@dataclass(frozen=True)
class LoadedModel:
    forecaster: Forecaster
    meta: dict[str, Any]
    topology: Topology | None
    path: Path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def topology_record(topo: Topology | None) -> dict[str, Any] | None:
    if topo is None:
        return None
    return {"source": topo.source, "paths": {n: list(p) for n, p in topo.paths.items()}}


def save_model(fc: Forecaster, meta: dict[str, Any], directory: Path) -> Path:
    """Writes model.skops then model.json; returns the directory."""
    import skops.io

    directory.mkdir(parents=True, exist_ok=True)
    with atomic_path(directory / MODEL_FILE) as tmp:
        skops.io.dump(fc.models(), tmp)
    record = {
        **meta,
        "format_version": FORMAT_VERSION,
        "model_file": MODEL_FILE,
        "model_sha256": _sha256(directory / MODEL_FILE),
        "quantiles": list(QUANTILES),
        "residual_quantiles": {t: [float(x) for x in fc.residual_quantiles[t]] for t in TARGETS},
        "tail_thresholds": [
            {"benchmark": k[0], "msg_size_bytes": k[1], "locality": k[2], "threshold_us": v}
            for k, v in sorted(fc.thresholds.items())
        ],
        "tail_base_rate": fc.base_rate,
        "tail_platt": list(fc.platt),
        "tail_method": fc.tail_method,
    }
    with atomic_path(directory / META_FILE) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return directory


def read_meta(directory: Path) -> dict[str, Any]:
    path = directory / META_FILE
    try:
        meta: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError as exc:
        raise InputError(path, "no trained model here (run `tailcast predict train`)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"unreadable model metadata ({exc})") from exc
    if not isinstance(meta, dict) or "format_version" not in meta:
        raise InputError(path, "not a tailcast model record")
    if meta["format_version"] != FORMAT_VERSION:
        raise InputError(
            path,
            f"model format {meta['format_version']}, this tailcast reads {FORMAT_VERSION}: "
            "retrain it (tailcast predict train)",
        )
    if list(meta.get("quantiles", [])) != list(QUANTILES):
        raise InputError(path, "model quantiles differ from this tailcast's: retrain it")
    return meta


def load_model(name: str = DEFAULT_MODEL, results: ResultsDir | None = None) -> LoadedModel:
    """Reads and checks a trained model; every failure is an InputError naming the file."""
    import skops.io

    directory = model_dir(name, results)
    meta = read_meta(directory)
    path = directory / MODEL_FILE
    try:
        if _sha256(path) != meta.get("model_sha256"):
            raise InputError(path, f"does not match {META_FILE} (SHA-256 differs)")
        untrusted = skops.io.get_untrusted_types(file=path)
        foreign = [
            t for t in untrusted if not t.startswith(_TRUSTED_PREFIXES) and t not in _TRUSTED_NAMES
        ]
        if foreign:
            raise InputError(path, f"holds types a forecast model never has: {foreign}")
        models = skops.io.load(path, trusted=untrusted)
    except OSError as exc:
        raise InputError(path, f"cannot read the model ({exc})") from exc
    except InputError:
        raise
    except Exception as exc:  # skops raises many kinds on a damaged file
        raise InputError(path, f"not a readable skops model ({type(exc).__name__}: {exc})") from exc
    try:
        fc = Forecaster(
            centres=models["centres"],
            residual_quantiles={
                t: np.asarray(meta["residual_quantiles"][t], dtype=np.float64) for t in TARGETS
            },
            classifier=models["classifier"],
            thresholds={
                (r["benchmark"], int(r["msg_size_bytes"]), r["locality"]): float(r["threshold_us"])
                for r in meta["tail_thresholds"]
            },
            base_rate=float(meta["tail_base_rate"]),
            platt=(float(meta["tail_platt"][0]), float(meta["tail_platt"][1])),
            tail_method=str(meta["tail_method"]),
            columns=tuple(FEATURES.index(name) for name in meta.get("features_used", FEATURES)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(directory / META_FILE, f"incomplete model record ({exc})") from exc
    topo_rec = meta.get("topology")
    topo = (
        Topology({n: tuple(p) for n, p in topo_rec["paths"].items()}, str(topo_rec["source"]))
        if topo_rec
        else None
    )
    return LoadedModel(fc, meta, topo, directory)
