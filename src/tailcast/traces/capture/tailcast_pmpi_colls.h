/* Collective and communicator wrappers of the tailcast PMPI tracer. */

static int64_t *bytes_list(int n, const int *counts, MPI_Datatype t, int64_t *total) {
  int sz = 0;
  PMPI_Type_size(t, &sz);
  int64_t *out = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  *total = 0;
  for (int i = 0; out && i < n; i++) {
    out[i] = (int64_t)counts[i] * sz;
    *total += out[i];
  }
  return out;
}

static int comm_size_of(MPI_Comm c) {
  int n = 0;
  PMPI_Comm_size(c, &n);
  return n;
}

#define COLL_BEGIN int64_t t0 = now_ns()
#define COLL_REC(OP)                                                                         \
  DONE(OP);                                                                                 \
  int ci = comm_index(c);                                                                   \
  r.comm = ci

int MPI_Barrier(MPI_Comm c) {
  TIMING_ONLY(TM_BARRIER, PMPI_Barrier(c), 0)
  COLL_BEGIN;
  int rc = PMPI_Barrier(c);
  if (active) { COLL_REC(TC_BARRIER); emit(&r, NULL, NULL, NULL, NULL); }
  return rc;
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  TIMING_ONLY(TM_BCAST, PMPI_Bcast(b, n, t, root, c), type_bytes(n, t))
  COLL_BEGIN;
  int rc = PMPI_Bcast(b, n, t, root, c);
  if (active) {
    COLL_REC(TC_BCAST);
    r.root = world_of(ci, root); r.send_bytes = type_bytes(n, t);
    rec_dtype(&r, t);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Reduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root,
               MPI_Comm c) {
  TIMING_ONLY(TM_REDUCE, PMPI_Reduce(sb, rb, n, t, op, root, c), type_bytes(n, t))
  COLL_BEGIN;
  int rc = PMPI_Reduce(sb, rb, n, t, op, root, c);
  if (active) {
    COLL_REC(TC_REDUCE);
    r.root = world_of(ci, root); r.send_bytes = type_bytes(n, t);
    rec_dtype(&r, t); rec_op(&r, op);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  TIMING_ONLY(TM_ALLREDUCE, PMPI_Allreduce(sb, rb, n, t, op, c), type_bytes(n, t))
  COLL_BEGIN;
  int rc = PMPI_Allreduce(sb, rb, n, t, op, c);
  if (active) {
    COLL_REC(TC_ALLREDUCE);
    r.send_bytes = type_bytes(n, t);
    rec_dtype(&r, t); rec_op(&r, op);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

#define BLOCKS(NAME, OP, TM)                                                                 \
  int NAME(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,      \
           MPI_Comm c) {                                                                    \
    TIMING_ONLY(TM, P##NAME(sb, sn, st, rb, rn, rt, c), type_bytes(rn, rt))                 \
    COLL_BEGIN;                                                                             \
    int rc = P##NAME(sb, sn, st, rb, rn, rt, c);                                            \
    if (active) {                                                                           \
      COLL_REC(OP);                                                                         \
      r.recv_bytes = type_bytes(rn, rt);                                                    \
      r.send_bytes = sb == MPI_IN_PLACE ? r.recv_bytes : type_bytes(sn, st);                \
      rec_dtype(&r, rt);                                                                    \
      emit(&r, NULL, NULL, NULL, NULL);                                                     \
    }                                                                                       \
    return rc;                                                                              \
  }
BLOCKS(MPI_Alltoall, TC_ALLTOALL, TM_ALLTOALL)
BLOCKS(MPI_Allgather, TC_ALLGATHER, TM_ALLGATHER)

int MPI_Gather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
               int root, MPI_Comm c) {
  TIMING_ONLY(TM_GATHER, PMPI_Gather(sb, sn, st, rb, rn, rt, root, c), type_bytes(sn, st))
  COLL_BEGIN;
  int rc = PMPI_Gather(sb, sn, st, rb, rn, rt, root, c);
  if (active) {
    COLL_REC(TC_GATHER);
    int me = comm_rank_of(c);
    r.root = world_of(ci, root);
    if (me == root) r.recv_bytes = type_bytes(rn, rt);
    r.send_bytes = (sb == MPI_IN_PLACE) ? r.recv_bytes : type_bytes(sn, st);
    rec_dtype(&r, sb == MPI_IN_PLACE ? rt : st);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Scatter(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                int root, MPI_Comm c) {
  TIMING_ONLY(TM_SCATTER, PMPI_Scatter(sb, sn, st, rb, rn, rt, root, c), type_bytes(rn, rt))
  COLL_BEGIN;
  int rc = PMPI_Scatter(sb, sn, st, rb, rn, rt, root, c);
  if (active) {
    COLL_REC(TC_SCATTER);
    int me = comm_rank_of(c);
    r.root = world_of(ci, root);
    if (me == root) r.send_bytes = type_bytes(sn, st);
    r.recv_bytes = (rb == MPI_IN_PLACE) ? r.send_bytes : type_bytes(rn, rt);
    rec_dtype(&r, rb == MPI_IN_PLACE ? st : rt);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                  const int rc_[], const int rd[], MPI_Datatype rt, MPI_Comm c) {
  TIMING_ONLY(TM_ALLTOALLV, PMPI_Alltoallv(sb, sc, sd, st, rb, rc_, rd, rt, c), -1)
  COLL_BEGIN;
  int rc = PMPI_Alltoallv(sb, sc, sd, st, rb, rc_, rd, rt, c);
  if (active) {
    COLL_REC(TC_ALLTOALLV);
    int n = comm_size_of(c);
    int64_t *rl = bytes_list(n, rc_, rt, &r.recv_bytes);
    int64_t *sl = sb == MPI_IN_PLACE ? rl : bytes_list(n, sc, st, &r.send_bytes);
    if (sb == MPI_IN_PLACE) r.send_bytes = r.recv_bytes;
    r.n_send_counts = r.n_recv_counts = n;
    rec_dtype(&r, rt);
    emit(&r, sl, rl, NULL, NULL);
    if (sl != rl) free(sl);
    free(rl);
  }
  return rc;
}

int MPI_Allgatherv(const void *sb, int sn, MPI_Datatype st, void *rb, const int rc_[],
                   const int rd[], MPI_Datatype rt, MPI_Comm c) {
  TIMING_ONLY(TM_ALLGATHERV, PMPI_Allgatherv(sb, sn, st, rb, rc_, rd, rt, c), type_bytes(sn, st))
  COLL_BEGIN;
  int rc = PMPI_Allgatherv(sb, sn, st, rb, rc_, rd, rt, c);
  if (active) {
    COLL_REC(TC_ALLGATHERV);
    int n = comm_size_of(c);
    int64_t *rl = bytes_list(n, rc_, rt, &r.recv_bytes);
    r.send_bytes = sb == MPI_IN_PLACE ? (rl ? rl[comm_rank_of(c)] : 0) : type_bytes(sn, st);
    r.n_recv_counts = n;
    rec_dtype(&r, rt);
    emit(&r, NULL, rl, NULL, NULL);
    free(rl);
  }
  return rc;
}

int MPI_Gatherv(const void *sb, int sn, MPI_Datatype st, void *rb, const int rc_[],
                const int rd[], MPI_Datatype rt, int root, MPI_Comm c) {
  TIMING_ONLY(TM_GATHERV, PMPI_Gatherv(sb, sn, st, rb, rc_, rd, rt, root, c), type_bytes(sn, st))
  COLL_BEGIN;
  int rc = PMPI_Gatherv(sb, sn, st, rb, rc_, rd, rt, root, c);
  if (active) {
    COLL_REC(TC_GATHERV);
    int me = comm_rank_of(c), n = comm_size_of(c);
    int64_t *rl = NULL;
    r.root = world_of(ci, root);
    if (me == root) { rl = bytes_list(n, rc_, rt, &r.recv_bytes); r.n_recv_counts = n; }
    r.send_bytes = sb == MPI_IN_PLACE ? (rl ? rl[me] : 0) : type_bytes(sn, st);
    rec_dtype(&r, sb == MPI_IN_PLACE ? rt : st);
    emit(&r, NULL, rl, NULL, NULL);
    free(rl);
  }
  return rc;
}

int MPI_Scatterv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                 int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  TIMING_ONLY(TM_SCATTERV, PMPI_Scatterv(sb, sc, sd, st, rb, rn, rt, root, c), type_bytes(rn, rt))
  COLL_BEGIN;
  int rc = PMPI_Scatterv(sb, sc, sd, st, rb, rn, rt, root, c);
  if (active) {
    COLL_REC(TC_SCATTERV);
    int me = comm_rank_of(c), n = comm_size_of(c);
    int64_t *sl = NULL;
    r.root = world_of(ci, root);
    if (me == root) { sl = bytes_list(n, sc, st, &r.send_bytes); r.n_send_counts = n; }
    r.recv_bytes = rb == MPI_IN_PLACE ? (sl ? sl[me] : 0) : type_bytes(rn, rt);
    rec_dtype(&r, rb == MPI_IN_PLACE ? st : rt);
    emit(&r, sl, NULL, NULL, NULL);
    free(sl);
  }
  return rc;
}

int MPI_Reduce_scatter(const void *sb, void *rb, const int rc_[], MPI_Datatype t, MPI_Op op,
                       MPI_Comm c) {
  TIMING_ONLY(TM_REDUCE_SCATTER, PMPI_Reduce_scatter(sb, rb, rc_, t, op, c), -1)
  COLL_BEGIN;
  int rc = PMPI_Reduce_scatter(sb, rb, rc_, t, op, c);
  if (active) {
    COLL_REC(TC_REDUCE_SCATTER);
    int n = comm_size_of(c);
    int64_t *rl = bytes_list(n, rc_, t, &r.send_bytes);
    r.recv_bytes = rl ? rl[comm_rank_of(c)] : 0;
    r.n_recv_counts = n;
    rec_dtype(&r, t); rec_op(&r, op);
    emit(&r, NULL, rl, NULL, NULL);
    free(rl);
  }
  return rc;
}

int MPI_Reduce_scatter_block(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                             MPI_Comm c) {
  TIMING_ONLY(TM_REDUCE_SCATTER_BLOCK, PMPI_Reduce_scatter_block(sb, rb, n, t, op, c),
              type_bytes(n, t))
  COLL_BEGIN;
  int rc = PMPI_Reduce_scatter_block(sb, rb, n, t, op, c);
  if (active) {
    COLL_REC(TC_REDUCE_SCATTER_BLOCK);
    r.recv_bytes = type_bytes(n, t);
    r.send_bytes = r.recv_bytes * comm_size_of(c);
    rec_dtype(&r, t); rec_op(&r, op);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

#include "tailcast_pmpi_nbc.h"

/* ---- communicators ---- */

static void comm_created(int op, int64_t t0, MPI_Comm parent, MPI_Comm made) {
  DONE(op);
  r.comm = comm_index(parent);
  r.new_comm = made == MPI_COMM_NULL ? -1 : comm_index(made);
  r.t_end = now_ns();
  emit(&r, NULL, NULL, NULL, NULL);
}

int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *out) {
  COLL_BEGIN;
  int rc = PMPI_Comm_split(c, color, key, out);
  if (active) comm_created(TC_COMM_SPLIT, t0, c, *out);
  return rc;
}

int MPI_Comm_dup(MPI_Comm c, MPI_Comm *out) {
  COLL_BEGIN;
  int rc = PMPI_Comm_dup(c, out);
  if (active) comm_created(TC_COMM_DUP, t0, c, *out);
  return rc;
}

int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *out) {
  COLL_BEGIN;
  int rc = PMPI_Comm_create(c, g, out);
  if (active) comm_created(TC_COMM_CREATE, t0, c, *out);
  return rc;
}

int MPI_Comm_free(MPI_Comm *c) {
  COLL_BEGIN;
  int ci = active ? comm_index(*c) : -1;
  int rc = PMPI_Comm_free(c);
  if (active) {
    DONE(TC_COMM_FREE);
    r.comm = ci;
    if (ci >= 0) comms[ci].handle = MPI_COMM_NULL; /* a reused handle is a new comm */
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}
