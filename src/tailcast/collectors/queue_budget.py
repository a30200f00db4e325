"""Queue reads that outlast a slurmctld restart (issue 19 §3): a read that fails is tried
again after a growing pause until a time budget is spent, then given up with one typed error.

The budget bounds the whole read, not each try: every squeue gets as its timeout what is
left of the budget, and no try starts with less than MIN_TRY_S left, so a read never takes
longer than the budget plus one squeue's exit. With slurmctld down, Slurm 22.05's squeue
itself spends ~9 s retrying its connection before it fails (measured on the local cluster),
so a budget below ~10 s leaves room for one try only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tailcast.collectors.proc import RetryPolicy
from tailcast.collectors.snapshot import Snapshot, snapshot_of
from tailcast.collectors.squeue import read_order, read_queue
from tailcast.errors import ExternalToolError, InputError

QUEUE_BUDGET_S = 120.0  # the agent's default: a controller restart takes seconds to a minute
FIRST_PAUSE_S = 1.0  # pause after the first failed try, doubled after each further one
MAX_PAUSE_S = 15.0
MIN_TRY_S = 0.5  # no try starts with less of the budget left


@dataclass(frozen=True)
class QueueBudget:
    budget_s: float = QUEUE_BUDGET_S
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


class QueueUnavailable(ExternalToolError):
    """No queue read succeeded within the budget; says how long and how many tries."""

    def __init__(self, budget_s: float, elapsed_s: float, tries: int, last: Exception) -> None:
        self.elapsed_s = elapsed_s
        self.tries = tries
        super().__init__(
            "squeue",
            f"queue unreadable for {elapsed_s:.1f} s ({tries} tries, budget {budget_s:g} s); "
            f"last: {last}",
        )


def snapshot_within(
    budget: QueueBudget,
    backend: str,
    n_t: int,
    own_job_id: str | None,
    exclude_own: bool,
    on_retry: Callable[[str], None] = lambda line: None,
) -> Snapshot:
    """One queue snapshot, its reads retried with backoff until `budget` is spent; raises
    QueueUnavailable then. `on_retry` hears one line per failed try."""
    start = budget.clock()
    deadline = start + budget.budget_s
    pause = FIRST_PAUSE_S
    tries = 0
    last: Exception | None = None
    while True:
        for name in read_order(backend):
            left = deadline - budget.clock()
            if left < MIN_TRY_S:
                break
            tries += 1
            try:
                queue = read_queue(name, RetryPolicy(attempts=1, timeout_s=left))
                return snapshot_of(queue, n_t, own_job_id, exclude_own)
            except (ExternalToolError, InputError) as exc:
                last = exc
        left = deadline - budget.clock()
        if left < MIN_TRY_S or last is None:
            elapsed = budget.clock() - start
            raise QueueUnavailable(
                budget.budget_s, elapsed, tries, last or RuntimeError("no time to try")
            )
        on_retry(f"queue read failed ({last}); next try in {min(pause, left):.1f} s")
        budget.sleep(min(pause, left))
        pause = min(pause * 2, MAX_PAUSE_S)
