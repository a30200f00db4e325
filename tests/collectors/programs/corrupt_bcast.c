/* A PMPI shim for the tests: after every MPI_Bcast of at least $CORRUPT_FROM_BYTES bytes, a
 * non-root rank flips the first byte it received. Preloaded under a real OSU binary run with
 * -c, it makes OSU's own validation fail at that size (a real "DATA VALIDATION ERROR"). */
#include <mpi.h>
#include <stdlib.h>

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  int rc = PMPI_Bcast(buf, count, type, root, comm);
  int rank = 0, size = 0;
  const char *from = getenv("CORRUPT_FROM_BYTES");
  PMPI_Comm_rank(comm, &rank);
  PMPI_Type_size(type, &size);
  if (from && rank != root && (long)count * size >= atol(from) && count > 0)
    ((unsigned char *)buf)[0] ^= 0xFF;
  return rc;
}
