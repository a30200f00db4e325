"""Grouped, time-ordered folds: the store's runs are grouped by Slurm job (runs of one job
share its queue and its minutes), groups are ordered by start, and the ordered list is cut
into n_folds + 1 blocks. Fold i tests on block i and trains only on groups that *ended
before the first test run started* — never on the future, nor on a group overlapping the
test block in time. Used for validation and, inside a training set, for calibration."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tailcast.errors import NotAcceptedError
from tailcast.forecast.dataset import TrainingSet

IndexArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Fold:
    train: IndexArray
    test: IndexArray


def time_ordered_folds(ts: TrainingSet, n_folds: int = 5, min_train_groups: int = 2) -> list[Fold]:
    groups: dict[str, list[int]] = {}
    for i, g in enumerate(ts.cv_groups):
        groups.setdefault(g, []).append(i)
    order = sorted(groups, key=lambda g: float(ts.started[groups[g]].min()))
    blocks = np.array_split(np.arange(len(order)), min(n_folds + 1, len(order)))
    folds = []
    for block in blocks[1:]:
        test = np.array(sorted(i for b in block for i in groups[order[b]]), dtype=np.intp)
        first_test = float(ts.started[test].min())
        train_groups = [g for g in order if float(ts.ended[groups[g]].max()) < first_test]
        if len(train_groups) < min_train_groups:
            continue
        train = np.array(sorted(i for g in train_groups for i in groups[g]), dtype=np.intp)
        folds.append(Fold(train, test))
    if not folds:
        raise NotAcceptedError(
            f"{len(order)} Slurm jobs of runs in the store: too few for time-ordered "
            f"validation (need ≥ {min_train_groups + 1} that do not overlap in time)"
        )
    return folds
