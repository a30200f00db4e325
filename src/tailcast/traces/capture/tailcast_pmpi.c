/* tailcast PMPI tracer: records MPI calls of any MPI-3 program into per-rank binary files.
 *
 * Loaded with LD_PRELOAD; each wrapper takes CLOCK_MONOTONIC timestamps around the PMPI call
 * and appends one fixed-size record (plus optional int64 lists) to a bounded per-rank buffer
 * that is written to $TAILCAST_TRACE_DIR/rank-NNNNNN.bin whenever it fills, at finalize,
 * at exit, and from fatal-signal handlers (so a crashed rank leaves a readable prefix).
 * Peers and roots are recorded as communicator ranks plus a per-rank communicator id; every
 * communicator is registered once with its members as world ranks, so the converter
 * (tailcast.traces.capture.raw) maps everything to world ranks.
 * The op codes below must stay in the order of raw.py's OPCODES.
 * With TAILCAST_TRACE_MODE=timing it records only each call's times instead
 * (tailcast_pmpi_timing.h), for per-iteration benchmark samples.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum tc_op {
  TC_INIT, TC_FINALIZE, TC_SEND, TC_ISEND, TC_RECV, TC_IRECV, TC_SENDRECV, TC_WAIT,
  TC_WAITALL, TC_WAITANY, TC_WAITSOME, TC_TEST, TC_TESTALL, TC_TESTANY, TC_TESTSOME,
  TC_BARRIER, TC_BCAST, TC_REDUCE, TC_ALLREDUCE, TC_ALLTOALL, TC_ALLTOALLV, TC_ALLGATHER,
  TC_ALLGATHERV, TC_GATHER, TC_GATHERV, TC_SCATTER, TC_SCATTERV, TC_REDUCE_SCATTER,
  TC_REDUCE_SCATTER_BLOCK, TC_COMM_SPLIT, TC_COMM_DUP, TC_COMM_CREATE, TC_COMM_FREE,
  TC_REQ_DONE = 100, /* internal: a receive request completed (source, tag, bytes) */
  TC_COMM_REG = 101  /* internal: communicator id -> world-rank members */
};

#define NUL32 INT32_MIN
#define NUL64 INT64_MIN

typedef struct {
  int64_t t_start, t_end, send_bytes, recv_bytes, request;
  int32_t op, peer, root, tag, comm, recv_peer, recv_tag, new_comm;
  int32_t n_send_counts, n_recv_counts, n_requests, n_members;
  int32_t dtype_bytes, commutative; /* collectives: MPI_Type_size, MPI_Op_commutative */
} tc_rec;

typedef struct tc_comm {
  MPI_Comm handle;
  int32_t id, size;
  int32_t *members; /* world rank of each communicator rank */
} tc_comm;

typedef struct {
  uint64_t key; /* the MPI_Request handle's bits; 0 = empty slot */
  int64_t id;
  int32_t comm_index; /* index into comms, for receives; -1 for sends */
} tc_req;

static char *buf;
static size_t buf_cap, buf_len;
static int out_fd = -1;
static int world_rank = -1, world_size = 0, active = 0;
static tc_comm *comms;
static int n_comms, cap_comms;
static tc_req *reqs;
static size_t req_cap, req_used;
static int64_t next_request;

static void flush_buffer(void);

static inline int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void write_all(const char *p, size_t n) {
  while (n > 0 && out_fd >= 0) {
    ssize_t w = write(out_fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    n -= (size_t)w;
  }
}

static void flush_buffer(void) {
  if (buf_len) write_all(buf, buf_len);
  buf_len = 0;
}

#include "tailcast_pmpi_timing.h"

static void emit(tc_rec *r, const int64_t *sc, const int64_t *rc, const int64_t *rq,
                 const int64_t *mem) {
  if (!active) return;
  size_t lists = (size_t)(r->n_send_counts + r->n_recv_counts + r->n_requests + r->n_members);
  size_t need = sizeof *r + lists * sizeof(int64_t);
  if (buf_len + need > buf_cap) flush_buffer();
  char *dst = buf + buf_len;
  int direct = need > buf_cap;
  if (direct) dst = malloc(need);
  if (!dst) return;
  size_t off = 0;
  memcpy(dst, r, sizeof *r);
  off += sizeof *r;
#define PUT(arr, n) if ((n) > 0) { memcpy(dst + off, (arr), (size_t)(n) * 8); off += (size_t)(n) * 8; }
  PUT(sc, r->n_send_counts);
  PUT(rc, r->n_recv_counts);
  PUT(rq, r->n_requests);
  PUT(mem, r->n_members);
#undef PUT
  if (direct) {
    write_all(dst, need);
    free(dst);
  } else {
    buf_len += need;
  }
}

static void rec_init(tc_rec *r, int op, int64_t t0) {
  r->t_start = t0;
  r->t_end = now_ns();
  r->send_bytes = r->recv_bytes = r->request = NUL64;
  r->op = op;
  r->peer = r->root = r->tag = r->comm = r->recv_peer = r->recv_tag = r->new_comm = NUL32;
  r->n_send_counts = r->n_recv_counts = r->n_requests = r->n_members = 0;
  r->dtype_bytes = r->commutative = NUL32;
}

/* ---- communicators ---- */

static int comm_index(MPI_Comm c) {
  if (c == MPI_COMM_NULL) return -1;
  for (int i = 0; i < n_comms; i++)
    if (comms[i].handle == c) return i;
  int size = 0, flag = 0;
  PMPI_Comm_test_inter(c, &flag);
  if (flag) PMPI_Comm_remote_size(c, &size); else PMPI_Comm_size(c, &size);
  if (n_comms == cap_comms) {
    cap_comms = cap_comms ? 2 * cap_comms : 16;
    comms = realloc(comms, (size_t)cap_comms * sizeof *comms);
  }
  tc_comm *e = &comms[n_comms];
  e->handle = c;
  e->id = n_comms;
  e->size = size;
  e->members = malloc((size_t)(size > 0 ? size : 1) * sizeof(int32_t));
  MPI_Group g, wg;
  if (flag) PMPI_Comm_remote_group(c, &g); else PMPI_Comm_group(c, &g);
  PMPI_Comm_group(MPI_COMM_WORLD, &wg);
  int *in = malloc((size_t)(size > 0 ? size : 1) * sizeof(int));
  int *out = malloc((size_t)(size > 0 ? size : 1) * sizeof(int));
  for (int i = 0; i < size; i++) in[i] = i;
  PMPI_Group_translate_ranks(g, size, in, wg, out);
  int64_t *mem = malloc((size_t)(size > 0 ? size : 1) * sizeof(int64_t));
  for (int i = 0; i < size; i++) {
    e->members[i] = out[i];
    mem[i] = out[i];
  }
  PMPI_Group_free(&g);
  PMPI_Group_free(&wg);
  free(in);
  free(out);
  n_comms++;
  tc_rec r;
  int64_t t = now_ns();
  rec_init(&r, TC_COMM_REG, t);
  r.new_comm = e->id;
  r.n_members = size;
  emit(&r, NULL, NULL, NULL, mem);
  free(mem);
  return n_comms - 1;
}

static int32_t world_of(int ci, int rank) {
  if (rank == MPI_ANY_SOURCE) return -1;
  if (rank == MPI_PROC_NULL || rank == MPI_ROOT) return NUL32;
  if (ci < 0 || rank < 0 || rank >= comms[ci].size) return NUL32;
  return comms[ci].members[rank];
}

static int comm_rank_of(MPI_Comm c) {
  int r = -1;
  PMPI_Comm_rank(c, &r);
  return r;
}

/* ---- requests: open-addressing table keyed by the handle's bits ---- */

static uint64_t req_key(MPI_Request r) {
  uint64_t k = 0;
  memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  return k ? k : 1;
}

static tc_req *req_slot(uint64_t key) {
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ULL) & (req_cap - 1);
  while (reqs[i].key && reqs[i].key != key) i = (i + 1) & (req_cap - 1);
  return &reqs[i];
}

static void req_grow(void) {
  tc_req *old = reqs;
  size_t old_cap = req_cap;
  req_cap = req_cap ? req_cap * 2 : 1024;
  reqs = calloc(req_cap, sizeof *reqs);
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) *req_slot(old[i].key) = old[i];
  free(old);
}

static int64_t req_add(MPI_Request r, int ci) {
  if (r == MPI_REQUEST_NULL) return NUL64;
  if ((req_used + 1) * 2 > req_cap) req_grow();
  tc_req *s = req_slot(req_key(r));
  if (!s->key) req_used++;
  s->key = req_key(r);
  s->id = next_request++;
  s->comm_index = ci;
  return s->id;
}

/* Removes the entry of a completed request; reports its receive status. */
static int64_t req_done(MPI_Request handle, const MPI_Status *st) {
  if (handle == MPI_REQUEST_NULL || !req_cap) return NUL64;
  uint64_t key = req_key(handle);
  tc_req *s = req_slot(key);
  if (s->key != key) return NUL64;
  int64_t id = s->id;
  int ci = s->comm_index;
  /* delete with backward-shift so probing chains stay intact */
  size_t i = (size_t)(s - reqs);
  s->key = 0;
  req_used--;
  for (size_t j = (i + 1) & (req_cap - 1); reqs[j].key; j = (j + 1) & (req_cap - 1)) {
    tc_req moved = reqs[j];
    reqs[j].key = 0;
    *req_slot(moved.key) = moved;
  }
  if (ci >= 0 && st && st != MPI_STATUS_IGNORE) {
    tc_rec r;
    int count = 0;
    PMPI_Get_count(st, MPI_BYTE, &count);
    int64_t t = now_ns();
    rec_init(&r, TC_REQ_DONE, t);
    r.request = id;
    r.peer = world_of(ci, st->MPI_SOURCE);
    r.tag = st->MPI_TAG;
    r.recv_bytes = count == MPI_UNDEFINED ? NUL64 : count;
    emit(&r, NULL, NULL, NULL, NULL);
  }
  return id;
}

/* A collective's element size and its op's commutativity: Open MPI 4.1 picks algorithms
 * and falls back on element counts and non-commutative ops, so the replay needs both. */
static void rec_dtype(tc_rec *r, MPI_Datatype t) {
  int sz = 0;
  if (t != MPI_DATATYPE_NULL && PMPI_Type_size(t, &sz) == MPI_SUCCESS) r->dtype_bytes = sz;
}

static void rec_op(tc_rec *r, MPI_Op op) {
  int commute = 1;
  if (PMPI_Op_commutative(op, &commute) == MPI_SUCCESS) r->commutative = commute ? 1 : 0;
}

static int64_t type_bytes(int count, MPI_Datatype t) {
  int sz = 0;
  if (t == MPI_DATATYPE_NULL) return 0;
  PMPI_Type_size(t, &sz);
  return (int64_t)count * sz;
}

/* ---- lifecycle ---- */

static struct sigaction old_actions[65];
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTERM};

static void on_fatal(int sig) {
  flush_buffer(); /* write(2) is async-signal-safe */
  active = 0;
  sigaction(sig, &old_actions[sig], NULL);
  raise(sig);
}

static void at_exit_flush(void) { flush_buffer(); }

static void start(int64_t t0) {
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const char *dir = getenv("TAILCAST_TRACE_DIR");
  if (!dir || !*dir) return;
  const char *mode = getenv("TAILCAST_TRACE_MODE");
  timing = mode && strcmp(mode, "timing") == 0;
  const char *cap = getenv("TAILCAST_TRACE_BUFFER_BYTES");
  /* timing mode: 8 MiB = 262,144 calls before a write(2) lands inside a timed region */
  buf_cap = cap ? (size_t)strtoull(cap, NULL, 10) : (size_t)(timing ? 8 : 1) << 20;
  if (buf_cap < 4096) buf_cap = 4096;
  buf_cap -= buf_cap % sizeof(tm_rec);
  buf = malloc(buf_cap);
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/rank-%06d.bin", dir, world_rank);
  out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || !buf) return;
  /* header: magic, version, world rank, world size, pid, record size */
  int32_t hdr[6] = {0x54434154 /* "TACT" */, timing ? 2 : 3, world_rank, world_size,
                    (int32_t)getpid(), (int32_t)(timing ? sizeof(tm_rec) : sizeof(tc_rec))};
  write_all((const char *)hdr, sizeof hdr);
  active = !timing;
  if (active) comm_index(MPI_COMM_WORLD); /* id 0 */
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sigemptyset(&sa.sa_mask);
    sigaction(fatal_signals[i], &sa, &old_actions[fatal_signals[i]]);
  }
  atexit(at_exit_flush);
  if (timing) {
    timed_record(TM_INIT, t0, now_ns(), 0);
    return;
  }
  tc_rec r;
  rec_init(&r, TC_INIT, t0);
  r.comm = 0;
  emit(&r, NULL, NULL, NULL, NULL);
}

int MPI_Init(int *argc, char ***argv) {
  int64_t t0 = now_ns();
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start(t0);
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int64_t t0 = now_ns();
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start(t0);
  return rc;
}

int MPI_Finalize(void) {
  int64_t t0 = now_ns();
  if (timing) {
    timed_record(TM_FINALIZE, t0, t0, 0);
  } else {
    tc_rec r;
    rec_init(&r, TC_FINALIZE, t0);
    r.comm = 0;
    emit(&r, NULL, NULL, NULL, NULL);
  }
  flush_buffer();
  active = timing = 0;
  if (out_fd >= 0) {
    fsync(out_fd);
    close(out_fd);
    out_fd = -1;
  }
  return PMPI_Finalize();
}

#include "tailcast_pmpi_calls.h"
