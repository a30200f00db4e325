/* A 4-rank MPI program whose calls are known exactly (tests/traces/test_capture.py holds the
 * expected counts and bytes). With argument "crash", rank 2 dies by SIGSEGV mid-run; with
 * "where", each rank prints "RANKNODE <rank> <SLURMD_NODENAME>" after MPI_Finalize. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  static char sbuf[1 << 16], rbuf[1 << 16];
  int r, n, sc[4], sd[4], rc[4], rd[4];
  MPI_Request q[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int i = 0; i < 3; i++) { /* ring: 3 x (isend + irecv + waitall), 1000 B */
    MPI_Isend(sbuf, 1000, MPI_BYTE, (r + 1) % n, i, MPI_COMM_WORLD, &q[0]);
    MPI_Irecv(rbuf, 1000, MPI_BYTE, (r + n - 1) % n, i, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  }
  if (r == 0) MPI_Send(sbuf, 256, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
  if (r == 1) MPI_Recv(rbuf, 256, MPI_DOUBLE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(sbuf, 64, MPI_INT, r ^ 1, 6, rbuf, 64, MPI_INT, r ^ 1, 6, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (argc > 1 && strcmp(argv[1], "crash") == 0 && r == 2) raise(SIGSEGV);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(sbuf, 100, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(sbuf, rbuf, 10, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
  for (int i = 0; i < 2; i++)
    MPI_Allreduce(sbuf, rbuf, 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(sbuf, 8, MPI_INT, rbuf, 8, MPI_INT, MPI_COMM_WORLD);
  for (int j = 0; j < n; j++) {
    sc[j] = r + j + 1; sd[j] = 64 * j; rc[j] = j + r + 1; rd[j] = 64 * j;
  }
  MPI_Alltoallv(sbuf, sc, sd, MPI_CHAR, rbuf, rc, rd, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Allgather(sbuf, 16, MPI_BYTE, rbuf, 16, MPI_BYTE, MPI_COMM_WORLD);
  for (int j = 0; j < n; j++) { rc[j] = j + 1; rd[j] = 64 * j; }
  MPI_Allgatherv(sbuf, r + 1, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Gather(sbuf, 12, MPI_BYTE, rbuf, 12, MPI_BYTE, 2, MPI_COMM_WORLD);
  MPI_Gatherv(sbuf, r + 1, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Scatter(sbuf, 20, MPI_BYTE, rbuf, 20, MPI_BYTE, 3, MPI_COMM_WORLD);
  for (int j = 0; j < n; j++) { sc[j] = j + 2; sd[j] = 64 * j; }
  MPI_Scatterv(sbuf, sc, sd, MPI_BYTE, rbuf, r + 2, MPI_BYTE, 0, MPI_COMM_WORLD);
  int rsc[4] = {1, 2, 3, 4};
  MPI_Reduce_scatter(sbuf, rbuf, rsc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(sbuf, rbuf, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm half, dup;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
  MPI_Allreduce(sbuf, rbuf, 1, MPI_DOUBLE, MPI_SUM, half);
  MPI_Bcast(sbuf, 1, MPI_INT, 1, half);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Barrier(dup);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  if (r == 0) { /* isend + test loop + wait on the receiver */
    MPI_Isend(sbuf, 8, MPI_BYTE, 3, 99, MPI_COMM_WORLD, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  }
  if (r == 3) {
    int flag = 0;
    MPI_Irecv(rbuf, 8, MPI_BYTE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &q[0]);
    while (!flag) MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
  }
  MPI_Irecv(rbuf, 32, MPI_BYTE, (r + n - 1) % n, 7, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(sbuf, 32, MPI_BYTE, (r + 1) % n, 7, MPI_COMM_WORLD, &q[1]);
  for (int k = 0; k < 2; k++) {
    int idx;
    MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  if (argc > 1 && strcmp(argv[1], "where") == 0) {
    const char *node = getenv("SLURMD_NODENAME");
    printf("RANKNODE %d %s\n", r, node ? node : "?");
  }
  return 0;
}
