"""The MPI protocol record of each run the agent measures (collectors/mpi_protocol.py):
Open MPI's parameters are read once per agent with the environment the ranks get (this
process's, which the batch script set, plus the launcher's `--mca` options), and turned
into a record per run, whose rank and node counts may differ (pt2pt tests run on 2)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from tailcast.collectors.mpi_protocol import MpiProtocol, open_mpi_protocol
from tailcast.collectors.ompi_params import OmpiInfo, mca_env, read_ompi_params
from tailcast.errors import ExternalToolError

OTHER_MPIS = ("MPICH", "MVAPICH", "Intel(R) MPI")  # their protocol is not recorded (yet)


class ProtocolRecorder:
    def __init__(self, launcher_args: Sequence[str], say: Callable[[str], None]) -> None:
        self.env = {**os.environ, **mca_env(launcher_args)}
        self.say = say
        self._info: OmpiInfo | None = None
        self._unknown: str | None = None

    def __call__(self, nodes: int, ranks: int, mpi_library: str) -> MpiProtocol | None:
        """The record of a run on `nodes` distinct nodes whose ranks reported `mpi_library`
        (the built-in benchmark: MPI_Get_library_version; OSU: the launcher's version);
        None (unknown) when that names another MPI or ompi_info fails (said once)."""
        if any(name in mpi_library for name in OTHER_MPIS):
            return None  # an ompi_info on PATH would describe a library the run did not use
        if self._info is None and self._unknown is None:
            try:
                self._info = read_ompi_params(self.env)
            except ExternalToolError as exc:
                self._unknown = str(exc)
                self.say(f"MPI protocol not recorded: {exc}")
        if self._info is None:
            return None
        return open_mpi_protocol(self._info, nodes, ranks, self.env)
