"""A 4-rank mpi4py program whose MPI calls are known exactly (see test_capture.py)."""

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
out = np.zeros(512, dtype=np.float64)
inp = np.zeros(512, dtype=np.float64)
for i in range(2):  # 2 x (Isend + Irecv + Waitall) of 100 doubles
    reqs = [
        comm.Isend(out[:100], dest=(r + 1) % n, tag=i),
        comm.Irecv(inp[:100], source=(r - 1) % n, tag=i),
    ]
    MPI.Request.Waitall(reqs)
if r == 0:
    comm.Send(out[:10], dest=2, tag=3)
elif r == 2:
    comm.Recv(inp[:10], source=0, tag=3)
comm.Barrier()
comm.Bcast(out[:50], root=1)
for _ in range(3):
    comm.Allreduce(out[:64], inp[:64], op=MPI.SUM)
comm.Alltoall(out[: 4 * n], inp[: 4 * n])
comm.Gather(out[:2], inp[: 2 * n] if r == 0 else None, root=0)
sub = comm.Split(r // 2, r)
sub.Allreduce(out[:1], inp[:1], op=MPI.SUM)
sub.Free()
