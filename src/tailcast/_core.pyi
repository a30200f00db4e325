"""Type stub of the compiled replay engine (crates/replay-py); checked by mypy.stubtest."""

import numpy as np
import numpy.typing as npt

__all__ = ["engine_version", "replay_local"]

def engine_version() -> str: ...
def replay_local(
    rank: npt.NDArray[np.uint32],
    t_start_ns: npt.NDArray[np.int64],
    t_end_ns: npt.NDArray[np.int64],
    compute_scale: float = 1.0,
) -> npt.NDArray[np.int64]: ...
