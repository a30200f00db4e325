/* One MPI_Allreduce whose element count decides Open MPI 4.1's algorithm (tests/traces/
 * test_capture_dtype.py): argument "double" reduces 4 MPI_DOUBLE (32 bytes, 4 elements),
 * "char" 32 MPI_CHAR (32 bytes, 32 elements), "noncommutative" 32 MPI_CHAR with a user op
 * created non-commutative. */
#include <mpi.h>
#include <string.h>

static void first_wins(void *in, void *inout, int *len, MPI_Datatype *t) {
  (void)in; (void)inout; (void)len; (void)t;
}

int main(int argc, char **argv) {
  static char sbuf[256], rbuf[256];
  MPI_Init(&argc, &argv);
  const char *what = argc > 1 ? argv[1] : "double";
  if (strcmp(what, "double") == 0) {
    MPI_Allreduce(sbuf, rbuf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else if (strcmp(what, "char") == 0) {
    MPI_Allreduce(sbuf, rbuf, 32, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
  } else {
    MPI_Op op;
    MPI_Op_create(first_wins, 0, &op);
    MPI_Allreduce(sbuf, rbuf, 32, MPI_CHAR, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
  }
  MPI_Finalize();
  return 0;
}
