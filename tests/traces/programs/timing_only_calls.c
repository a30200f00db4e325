/* A 4-rank MPI program using the calls only the tracer's timing mode records (non-blocking,
 * neighbourhood and w-collectives, MPI_Wtime), each a known number of times
 * (tests/traces/test_timing_mode.py holds the counts). */
#include <mpi.h>

int main(int argc, char **argv) {
  static char sbuf[4096], rbuf[4096];
  int r, n, counts[4] = {8, 8, 8, 8}, displs[4] = {0, 8, 16, 24};
  MPI_Aint adispls[4] = {0, 8, 16, 24};
  MPI_Datatype types[4] = {MPI_BYTE, MPI_BYTE, MPI_BYTE, MPI_BYTE};
  MPI_Request q;
  MPI_Comm ring;
  int dims[1] = {0}, periods[1] = {1};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  dims[0] = n;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  for (int i = 0; i < 3; i++) { /* as OSU's loops: clock, call, wait, clock */
    double t0 = MPI_Wtime();
    MPI_Ibcast(sbuf, 64, MPI_INT, 0, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    double t1 = MPI_Wtime();
    (void)(t1 - t0);
  }
  MPI_Iallreduce(sbuf, rbuf, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Ialltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE,
                 MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Alltoallw(sbuf, counts, displs, types, rbuf, counts, displs, types, MPI_COMM_WORLD);
  MPI_Ibarrier(MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Neighbor_allgather(sbuf, 32, MPI_BYTE, rbuf, 32, MPI_BYTE, ring);
  MPI_Ineighbor_alltoall(sbuf, 16, MPI_BYTE, rbuf, 16, MPI_BYTE, ring, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Neighbor_alltoallw(sbuf, counts, adispls, types, rbuf, counts, adispls, types, ring);
  MPI_Comm_free(&ring);
  MPI_Finalize();
  return 0;
}
