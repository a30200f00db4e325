"""Plain-text views of validation scores and forecasts for the terminal (`--json` prints the
dictionaries themselves)."""

from __future__ import annotations

from typing import Any

TARGET_NAMES = {"mean_us": "run mean", "p99_us": "run p99", "p99_over_p50": "p99/p50"}


def _pair(model: float | None, base: float | None, fmt: str) -> str:
    m = format(model, fmt) if model is not None else "—"
    b = format(base, fmt) if base is not None else "—"
    return f"{m} / {b}"


def band_line(scores: dict[str, Any]) -> str:
    """The 90 % band's empirical coverage and median width on the held-out runs."""
    reps = scores["targets"]
    names = " / ".join(TARGET_NAMES.get(t, t) for t in reps)
    cov = " / ".join(f"{r['model']['coverage']['90%']:.2f}" for r in reps.values())
    width = " / ".join(f"×{r['model']['median_width_ratio']['90%']:.3g}" for r in reps.values())
    runs = scores["held_out_runs"]
    return (
        f"90% band (q5–q95) of {names}: covered {cov} of {runs} held-out runs "
        f"(nominal 0.90); median width high/low {width}"
    )


def score_lines(scores: dict[str, Any]) -> list[str]:
    """The cross-validation report as lines: per target, the learned model on every
    held-out run, then learned / baseline on the runs the baseline can predict."""
    folds = scores["folds"]
    lines = [
        f"time-ordered CV: {len(folds)} folds, {scores['held_out_runs']} held-out runs "
        "(grouped by Slurm job; each fold trains only on jobs that ended before it)",
        "",
        f"{'target':10} {'runs':>5} {'pinball(log)':>14} {'cov 50%':>8} {'cov 90%':>8} "
        f"{'cov 99%':>8}   learned model, all held-out runs",
    ]
    for target, rep in scores["targets"].items():
        m = rep["model"]
        cov = m["coverage"]
        lines.append(
            f"{TARGET_NAMES.get(target, target):10} {m['runs']:5d} {m['pinball_log_mean']:14.3f} "
            f"{cov['50%']:8.2f} {cov['90%']:8.2f} {cov['99%']:8.2f}"
        )
    lines += [
        "",
        f"{'target':10} {'runs':>5} {'pinball(log)':>17} {'pinball(µs)':>21} {'cov 90%':>13}"
        "   learned / linear baseline, runs both predict",
    ]
    for target, rep in scores["targets"].items():
        p = rep["paired"]
        if not p["runs"]:
            lines.append(f"{TARGET_NAMES.get(target, target):10} {0:5d}   (baseline has no group)")
            continue
        m, b = p["model"], p["baseline"]
        lines.append(
            f"{TARGET_NAMES.get(target, target):10} {p['runs']:5d} "
            f"{_pair(m['pinball_log_mean'], b['pinball_log_mean'], '.3f'):>17} "
            f"{_pair(m['pinball_us_mean'], b['pinball_us_mean'], '.3g'):>21} "
            f"{_pair(m['coverage']['90%'], b['coverage']['90%'], '.2f'):>13}"
        )
    lines += ["", band_line(scores)]
    tail = scores["tail"]
    lines.append("")
    if "model" in tail:
        paired = tail.get("paired")
        lines.append(
            f"P(long tail): {tail['runs_labelled']} labelled runs, {tail['in_tail']} in the tail; "
            f"Brier {tail['model']['brier']:.3f} (base rate {tail['base_rate']['brier']:.3f})"
            + (
                f"; on {paired['runs']} runs the baseline covers: "
                f"{paired['model_brier']:.3f} vs baseline {paired['baseline_brier']:.3f}"
                if paired
                else ""
            )
        )
        for row in tail["reliability"]:
            lo, hi = row["bin"]
            lines.append(
                f"  predicted {lo:.1f}–{hi:.1f}: {row['runs']:4d} runs, mean predicted "
                f"{row['mean_predicted']:.2f}, observed {row['observed']:.2f}"
            )
    else:
        lines.append("P(long tail): no held-out run had a group threshold from its training fold")
    return lines
