/* Timing mode of the tailcast PMPI tracer (TAILCAST_TRACE_MODE=timing).
 *
 * Records only (call, t_start, t_end, bytes) per MPI call, 32 bytes each, with no
 * communicator or request bookkeeping: what a benchmark's per-iteration times need, at the
 * least cost inside the timed region (two clock reads and four stores). The file has the
 * tracer's header with version 2 and record size 32. The codes below must stay in the order
 * of tailcast.traces.capture.timing.CALLS. Sends of every mode are TM_SEND / TM_ISEND.
 */

enum tm_call {
  TM_INIT, TM_FINALIZE, TM_SEND, TM_RECV, TM_ISEND, TM_IRECV, TM_SENDRECV, TM_WAIT,
  TM_WAITALL, TM_WAITANY, TM_WAITSOME, TM_TEST, TM_TESTALL, TM_TESTANY, TM_TESTSOME,
  TM_BARRIER, TM_BCAST, TM_REDUCE, TM_ALLREDUCE, TM_ALLTOALL, TM_ALLTOALLV, TM_ALLTOALLW,
  TM_ALLGATHER, TM_ALLGATHERV, TM_GATHER, TM_GATHERV, TM_SCATTER, TM_SCATTERV,
  TM_REDUCE_SCATTER, TM_REDUCE_SCATTER_BLOCK,
  TM_IBARRIER, TM_IBCAST, TM_IREDUCE, TM_IALLREDUCE, TM_IALLTOALL, TM_IALLTOALLV,
  TM_IALLTOALLW, TM_IALLGATHER, TM_IALLGATHERV, TM_IGATHER, TM_IGATHERV, TM_ISCATTER,
  TM_ISCATTERV, TM_IREDUCE_SCATTER, TM_IREDUCE_SCATTER_BLOCK,
  TM_NEIGHBOR_ALLGATHER, TM_NEIGHBOR_ALLGATHERV, TM_NEIGHBOR_ALLTOALL, TM_NEIGHBOR_ALLTOALLV,
  TM_NEIGHBOR_ALLTOALLW, TM_INEIGHBOR_ALLGATHER, TM_INEIGHBOR_ALLGATHERV,
  TM_INEIGHBOR_ALLTOALL, TM_INEIGHBOR_ALLTOALLV, TM_INEIGHBOR_ALLTOALLW,
  TM_WTIME /* t_start = t_end = the value returned, in ns; bytes = its IEEE-754 bits */
};

typedef struct {
  int64_t t_start, t_end, bytes; /* bytes: count x type size of the call, -1 if not one */
  int32_t call, reserved;
} tm_rec;

static int timing; /* set by start() in timing mode; then `active` stays 0 */

static inline void timed_record(int32_t call, int64_t t0, int64_t t1, int64_t bytes) {
  if (buf_len + sizeof(tm_rec) > buf_cap) flush_buffer();
  tm_rec *r = (tm_rec *)(void *)(buf + buf_len); /* buf_len stays a multiple of 32 */
  r->t_start = t0;
  r->t_end = t1;
  r->bytes = bytes;
  r->call = call;
  r->reserved = 0;
  buf_len += sizeof *r;
}

/* First statement of a wrapper: in timing mode, time the PMPI call and return. */
#define TIMING_ONLY(CALL, PMPI_CALL, BYTES)                                              \
  if (timing) {                                                                          \
    int64_t tm_t0 = now_ns();                                                            \
    int tm_rc = (PMPI_CALL);                                                             \
    int64_t tm_t1 = now_ns();                                                            \
    timed_record((CALL), tm_t0, tm_t1, (BYTES));                                         \
    return tm_rc;                                                                        \
  }
