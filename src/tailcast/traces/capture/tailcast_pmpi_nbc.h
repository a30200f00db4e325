/* Wrappers the tracer has only in timing mode: MPI_Wtime, non-blocking and neighbourhood
 * collectives and the w-variants (the trace schema has no ops for them yet, so a full trace
 * passes them through unrecorded, as before). Included by tailcast_pmpi_colls.h. */

/* A benchmark's own clock readings: OSU times each iteration between two MPI_Wtime calls,
 * so recording their values gives exactly the intervals OSU averages. Stored after the
 * reading, without a clock read of our own, to add as little as possible to the interval. */
double MPI_Wtime(void) {
  double w = PMPI_Wtime();
  if (timing) {
    int64_t bits;
    memcpy(&bits, &w, sizeof bits);
    timed_record(TM_WTIME, (int64_t)(w * 1e9), (int64_t)(w * 1e9), bits);
  }
  return w;
}

#define PASS(CALL, PMPI_CALL, BYTES)                                                         \
  TIMING_ONLY(CALL, PMPI_CALL, BYTES)                                                       \
  return PMPI_CALL

int MPI_Alltoallw(const void *sb, const int sc[], const int sd[], const MPI_Datatype st[],
                  void *rb, const int rc[], const int rd[], const MPI_Datatype rt[],
                  MPI_Comm c) {
  PASS(TM_ALLTOALLW, PMPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c), -1);
}

int MPI_Ibarrier(MPI_Comm c, MPI_Request *q) { PASS(TM_IBARRIER, PMPI_Ibarrier(c, q), 0); }

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q) {
  PASS(TM_IBCAST, PMPI_Ibcast(b, n, t, root, c, q), type_bytes(n, t));
}

int MPI_Ireduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root,
                MPI_Comm c, MPI_Request *q) {
  PASS(TM_IREDUCE, PMPI_Ireduce(sb, rb, n, t, op, root, c, q), type_bytes(n, t));
}

int MPI_Iallreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                   MPI_Request *q) {
  PASS(TM_IALLREDUCE, PMPI_Iallreduce(sb, rb, n, t, op, c, q), type_bytes(n, t));
}

#define IBLOCKS(NAME, CALL)                                                                  \
  int NAME(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,      \
           MPI_Comm c, MPI_Request *q) {                                                    \
    PASS(CALL, P##NAME(sb, sn, st, rb, rn, rt, c, q), type_bytes(rn, rt));                  \
  }
IBLOCKS(MPI_Ialltoall, TM_IALLTOALL)
IBLOCKS(MPI_Iallgather, TM_IALLGATHER)
IBLOCKS(MPI_Ineighbor_allgather, TM_INEIGHBOR_ALLGATHER)
IBLOCKS(MPI_Ineighbor_alltoall, TM_INEIGHBOR_ALLTOALL)

#define BLOCKS_TIMED(NAME, CALL)                                                             \
  int NAME(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,      \
           MPI_Comm c) {                                                                    \
    PASS(CALL, P##NAME(sb, sn, st, rb, rn, rt, c), type_bytes(rn, rt));                     \
  }
BLOCKS_TIMED(MPI_Neighbor_allgather, TM_NEIGHBOR_ALLGATHER)
BLOCKS_TIMED(MPI_Neighbor_alltoall, TM_NEIGHBOR_ALLTOALL)

#define IROOTED(NAME, CALL, BYTES)                                                           \
  int NAME(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,      \
           int root, MPI_Comm c, MPI_Request *q) {                                          \
    PASS(CALL, P##NAME(sb, sn, st, rb, rn, rt, root, c, q), BYTES);                         \
  }
IROOTED(MPI_Igather, TM_IGATHER, type_bytes(sn, st))
IROOTED(MPI_Iscatter, TM_ISCATTER, type_bytes(rn, rt))

int MPI_Iallgatherv(const void *sb, int sn, MPI_Datatype st, void *rb, const int rc[],
                    const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request *q) {
  PASS(TM_IALLGATHERV, PMPI_Iallgatherv(sb, sn, st, rb, rc, rd, rt, c, q), type_bytes(sn, st));
}

int MPI_Ineighbor_allgatherv(const void *sb, int sn, MPI_Datatype st, void *rb,
                             const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c,
                             MPI_Request *q) {
  PASS(TM_INEIGHBOR_ALLGATHERV,
       PMPI_Ineighbor_allgatherv(sb, sn, st, rb, rc, rd, rt, c, q), type_bytes(sn, st));
}

int MPI_Neighbor_allgatherv(const void *sb, int sn, MPI_Datatype st, void *rb,
                            const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c) {
  PASS(TM_NEIGHBOR_ALLGATHERV, PMPI_Neighbor_allgatherv(sb, sn, st, rb, rc, rd, rt, c),
       type_bytes(sn, st));
}

int MPI_Igatherv(const void *sb, int sn, MPI_Datatype st, void *rb, const int rc[],
                 const int rd[], MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q) {
  PASS(TM_IGATHERV, PMPI_Igatherv(sb, sn, st, rb, rc, rd, rt, root, c, q),
       type_bytes(sn, st));
}

int MPI_Iscatterv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                  int rn, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q) {
  PASS(TM_ISCATTERV, PMPI_Iscatterv(sb, sc, sd, st, rb, rn, rt, root, c, q),
       type_bytes(rn, rt));
}

#define VECTORS(NAME, CALL)                                                                  \
  int NAME(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,       \
           const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request *q) {   \
    PASS(CALL, P##NAME(sb, sc, sd, st, rb, rc, rd, rt, c, q), -1);                          \
  }
VECTORS(MPI_Ialltoallv, TM_IALLTOALLV)
VECTORS(MPI_Ineighbor_alltoallv, TM_INEIGHBOR_ALLTOALLV)

int MPI_Neighbor_alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st,
                           void *rb, const int rc[], const int rd[], MPI_Datatype rt,
                           MPI_Comm c) {
  PASS(TM_NEIGHBOR_ALLTOALLV, PMPI_Neighbor_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, c), -1);
}

int MPI_Ialltoallw(const void *sb, const int sc[], const int sd[], const MPI_Datatype st[],
                   void *rb, const int rc[], const int rd[], const MPI_Datatype rt[],
                   MPI_Comm c, MPI_Request *q) {
  PASS(TM_IALLTOALLW, PMPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, c, q), -1);
}

int MPI_Neighbor_alltoallw(const void *sb, const int sc[], const MPI_Aint sd[],
                           const MPI_Datatype st[], void *rb, const int rc[],
                           const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c) {
  PASS(TM_NEIGHBOR_ALLTOALLW, PMPI_Neighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c), -1);
}

int MPI_Ineighbor_alltoallw(const void *sb, const int sc[], const MPI_Aint sd[],
                            const MPI_Datatype st[], void *rb, const int rc[],
                            const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c,
                            MPI_Request *q) {
  PASS(TM_INEIGHBOR_ALLTOALLW,
       PMPI_Ineighbor_alltoallw(sb, sc, sd, st, rb, rc, rd, rt, c, q), -1);
}

int MPI_Ireduce_scatter(const void *sb, void *rb, const int rc[], MPI_Datatype t, MPI_Op op,
                        MPI_Comm c, MPI_Request *q) {
  PASS(TM_IREDUCE_SCATTER, PMPI_Ireduce_scatter(sb, rb, rc, t, op, c, q), -1);
}

int MPI_Ireduce_scatter_block(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm c, MPI_Request *q) {
  PASS(TM_IREDUCE_SCATTER_BLOCK, PMPI_Ireduce_scatter_block(sb, rb, n, t, op, c, q),
       type_bytes(n, t));
}
