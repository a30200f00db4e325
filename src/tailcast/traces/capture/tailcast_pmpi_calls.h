/* The MPI wrappers of the tailcast PMPI tracer (included by tailcast_pmpi.c).
 * Sizes follow tailcast.traces.schema: count x type size, per-peer blocks for the
 * all-to-all family, v-collectives with per-rank byte lists; arguments MPI declares
 * insignificant on a rank (e.g. gather's receive side on non-roots) are not read. */

#define DONE(op) tc_rec r; rec_init(&r, (op), t0)
#define SEND_LIKE(NAME, OP)                                                                  \
  int NAME(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c) {            \
    TIMING_ONLY(TM_SEND, P##NAME(b, n, t, dst, tag, c), type_bytes(n, t))                   \
    int64_t t0 = now_ns();                                                                  \
    int rc = P##NAME(b, n, t, dst, tag, c);                                                 \
    if (active) {                                                                           \
      DONE(OP);                                                                             \
      int ci = comm_index(c);                                                               \
      r.comm = ci; r.peer = world_of(ci, dst); r.tag = tag; r.send_bytes = type_bytes(n, t); \
      emit(&r, NULL, NULL, NULL, NULL);                                                     \
    }                                                                                       \
    return rc;                                                                              \
  }
#define ISEND_LIKE(NAME)                                                                     \
  int NAME(const void *b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm c,              \
           MPI_Request *q) {                                                                \
    TIMING_ONLY(TM_ISEND, P##NAME(b, n, t, dst, tag, c, q), type_bytes(n, t))               \
    int64_t t0 = now_ns();                                                                  \
    int rc = P##NAME(b, n, t, dst, tag, c, q);                                              \
    if (active) {                                                                           \
      DONE(TC_ISEND);                                                                       \
      int ci = comm_index(c);                                                               \
      r.comm = ci; r.peer = world_of(ci, dst); r.tag = tag; r.send_bytes = type_bytes(n, t); \
      r.request = req_add(*q, -1);                                                          \
      emit(&r, NULL, NULL, NULL, NULL);                                                     \
    }                                                                                       \
    return rc;                                                                              \
  }

SEND_LIKE(MPI_Send, TC_SEND)
SEND_LIKE(MPI_Ssend, TC_SEND)
SEND_LIKE(MPI_Bsend, TC_SEND)
SEND_LIKE(MPI_Rsend, TC_SEND)
ISEND_LIKE(MPI_Isend)
ISEND_LIKE(MPI_Issend)
ISEND_LIKE(MPI_Ibsend)
ISEND_LIKE(MPI_Irsend)

static void fill_status(tc_rec *r, int ci, const MPI_Status *st, int recv_half) {
  int count = 0;
  PMPI_Get_count(st, MPI_BYTE, &count);
  int32_t src = st->MPI_SOURCE == MPI_PROC_NULL ? NUL32 : world_of(ci, st->MPI_SOURCE);
  if (recv_half) { r->recv_peer = src; r->recv_tag = st->MPI_TAG; }
  else { r->peer = src; r->tag = st->MPI_TAG; }
  r->recv_bytes = count == MPI_UNDEFINED ? NUL64 : count;
}

int MPI_Recv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *st) {
  TIMING_ONLY(TM_RECV, PMPI_Recv(b, n, t, src, tag, c, st), type_bytes(n, t))
  int64_t t0 = now_ns();
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Recv(b, n, t, src, tag, c, use);
  if (active) {
    DONE(TC_RECV);
    int ci = comm_index(c);
    r.comm = ci;
    fill_status(&r, ci, use, 0);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Irecv(void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *q) {
  TIMING_ONLY(TM_IRECV, PMPI_Irecv(b, n, t, src, tag, c, q), type_bytes(n, t))
  int64_t t0 = now_ns();
  int rc = PMPI_Irecv(b, n, t, src, tag, c, q);
  if (active) {
    DONE(TC_IRECV);
    int ci = comm_index(c);
    r.comm = ci; r.peer = world_of(ci, src); r.tag = tag; r.recv_bytes = type_bytes(n, t);
    r.request = req_add(*q, ci);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st_, int dst, int stag, void *rb, int rn,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status *st) {
  TIMING_ONLY(TM_SENDRECV,
              PMPI_Sendrecv(sb, sn, st_, dst, stag, rb, rn, rt, src, rtag, c, st),
              type_bytes(sn, st_))
  int64_t t0 = now_ns();
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Sendrecv(sb, sn, st_, dst, stag, rb, rn, rt, src, rtag, c, use);
  if (active) {
    DONE(TC_SENDRECV);
    int ci = comm_index(c);
    r.comm = ci; r.peer = world_of(ci, dst); r.tag = stag; r.send_bytes = type_bytes(sn, st_);
    fill_status(&r, ci, use, 1);
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return rc;
}

/* ---- completion ---- */

#define COPY_HANDLES(n, q)                                                                   \
  MPI_Request hs_small[64];                                                                 \
  MPI_Request *hs = (n) <= 64 ? hs_small : malloc((size_t)(n) * sizeof(MPI_Request));      \
  if (hs) memcpy(hs, (q), (size_t)(n) * sizeof(MPI_Request));
#define LOCAL_STATUSES(n, sts)                                                               \
  MPI_Status ss_small[64];                                                                  \
  MPI_Status *ss = (sts) != MPI_STATUSES_IGNORE ? (sts)                                     \
                   : (n) <= 64 ? ss_small : malloc((size_t)(n) * sizeof(MPI_Status));
#define RELEASE(n, sts)                                                                      \
  if (hs && hs != hs_small) free(hs);                                                       \
  if (ss != (sts) && ss != ss_small) free(ss);

static void single_completion(int op, int64_t t0, MPI_Request h, int done, MPI_Status *st) {
  DONE(op);
  if (done) r.request = req_done(h, st);
  emit(&r, NULL, NULL, NULL, NULL);
}

int MPI_Wait(MPI_Request *q, MPI_Status *st) {
  TIMING_ONLY(TM_WAIT, PMPI_Wait(q, st), 0)
  int64_t t0 = now_ns();
  MPI_Request h = *q;
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Wait(q, use);
  if (active) single_completion(TC_WAIT, t0, h, 1, use);
  return rc;
}

int MPI_Test(MPI_Request *q, int *flag, MPI_Status *st) {
  TIMING_ONLY(TM_TEST, PMPI_Test(q, flag, st), 0)
  int64_t t0 = now_ns();
  MPI_Request h = *q;
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Test(q, flag, use);
  if (active) single_completion(TC_TEST, t0, h, *flag, use);
  return rc;
}

int MPI_Waitany(int n, MPI_Request q[], int *idx, MPI_Status *st) {
  TIMING_ONLY(TM_WAITANY, PMPI_Waitany(n, q, idx, st), 0)
  int64_t t0 = now_ns();
  COPY_HANDLES(n, q);
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Waitany(n, q, idx, use);
  if (active && hs) {
    int done = *idx != MPI_UNDEFINED;
    single_completion(TC_WAITANY, t0, done ? hs[*idx] : MPI_REQUEST_NULL, done, use);
  }
  if (hs && hs != hs_small) free(hs);
  return rc;
}

int MPI_Testany(int n, MPI_Request q[], int *idx, int *flag, MPI_Status *st) {
  TIMING_ONLY(TM_TESTANY, PMPI_Testany(n, q, idx, flag, st), 0)
  int64_t t0 = now_ns();
  COPY_HANDLES(n, q);
  MPI_Status local;
  MPI_Status *use = st == MPI_STATUS_IGNORE ? &local : st;
  int rc = PMPI_Testany(n, q, idx, flag, use);
  if (active && hs) {
    int done = *flag && *idx != MPI_UNDEFINED;
    single_completion(TC_TESTANY, t0, done ? hs[*idx] : MPI_REQUEST_NULL, done, use);
  }
  if (hs && hs != hs_small) free(hs);
  return rc;
}

/* Records the requests a multi-completion call completed (indices NULL = all n). */
static void multi_completion(int op, int64_t t0, int n, const MPI_Request *hs,
                             const int *indices, MPI_Status *ss) {
  DONE(op);
  int64_t small[64];
  int64_t *ids = n <= 64 ? small : malloc((size_t)n * sizeof(int64_t));
  int k = 0;
  for (int i = 0; ids && i < n; i++) {
    int which = indices ? indices[i] : i;
    int64_t id = req_done(hs[which], &ss[i]);
    if (id != NUL64) ids[k++] = id;
  }
  r.n_requests = k;
  emit(&r, NULL, NULL, ids, NULL);
  if (ids != small) free(ids);
}

int MPI_Waitall(int n, MPI_Request q[], MPI_Status sts[]) {
  TIMING_ONLY(TM_WAITALL, PMPI_Waitall(n, q, sts), 0)
  int64_t t0 = now_ns();
  COPY_HANDLES(n, q);
  LOCAL_STATUSES(n, sts);
  int rc = PMPI_Waitall(n, q, ss);
  if (active && hs && ss) multi_completion(TC_WAITALL, t0, n, hs, NULL, ss);
  RELEASE(n, sts);
  return rc;
}

int MPI_Testall(int n, MPI_Request q[], int *flag, MPI_Status sts[]) {
  TIMING_ONLY(TM_TESTALL, PMPI_Testall(n, q, flag, sts), 0)
  int64_t t0 = now_ns();
  COPY_HANDLES(n, q);
  LOCAL_STATUSES(n, sts);
  int rc = PMPI_Testall(n, q, flag, ss);
  if (active && hs && ss) multi_completion(TC_TESTALL, t0, *flag ? n : 0, hs, NULL, ss);
  RELEASE(n, sts);
  return rc;
}

#define SOME(NAME, OP, TM)                                                                   \
  int NAME(int n, MPI_Request q[], int *outn, int idx[], MPI_Status sts[]) {                \
    TIMING_ONLY(TM, P##NAME(n, q, outn, idx, sts), 0)                                       \
    int64_t t0 = now_ns();                                                                  \
    COPY_HANDLES(n, q);                                                                     \
    LOCAL_STATUSES(n, sts);                                                                 \
    int rc = P##NAME(n, q, outn, idx, ss);                                                  \
    if (active && hs && ss)                                                                 \
      multi_completion(OP, t0, *outn == MPI_UNDEFINED ? 0 : *outn, hs, idx, ss);            \
    RELEASE(n, sts);                                                                        \
    return rc;                                                                              \
  }
SOME(MPI_Waitsome, TC_WAITSOME, TM_WAITSOME)
SOME(MPI_Testsome, TC_TESTSOME, TM_TESTSOME)

#include "tailcast_pmpi_colls.h"
