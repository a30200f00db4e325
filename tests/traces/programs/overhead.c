/* Per-call cost of cheap MPI calls (MPI_Test on MPI_REQUEST_NULL, 1-rank MPI_Barrier,
 * MPI_Isend+MPI_Wait to self): run with and without the tracer, the difference is the
 * tracer's per-call overhead. Prints "<name> <ns per call>" lines. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  const int n = 200000;
  int flag;
  char b[8];
  MPI_Request q = MPI_REQUEST_NULL, s;
  MPI_Init(&argc, &argv);
  double t = now();
  for (int i = 0; i < n; i++) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
  printf("test %.1f\n", (now() - t) / n);
  t = now();
  for (int i = 0; i < n; i++) MPI_Barrier(MPI_COMM_SELF);
  printf("barrier %.1f\n", (now() - t) / n);
  t = now();
  for (int i = 0; i < n; i++) {
    MPI_Irecv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &q);
    MPI_Isend(b, 8, MPI_BYTE, 0, 1, MPI_COMM_SELF, &s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  printf("p2p4 %.1f\n", (now() - t) / n / 4);
  MPI_Finalize();
  return 0;
}
