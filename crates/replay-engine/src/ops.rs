//! The operation code table shared by the engine and the Python side (`tailcast._core.op_codes`).
//! Trace `op` strings are MPI names, lower case, without the `MPI_` prefix.

use crate::collectives::CollKind;

/// One MPI call kind. The numeric values are stable (they cross the binding as `u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// Any call without communication semantics (comm_rank, wtime, …): instantaneous.
    Other = 0,
    Init = 1,
    Finalize = 2,
    Send = 3,
    Recv = 4,
    Isend = 5,
    Irecv = 6,
    Ssend = 7,
    Issend = 8,
    /// peer = destination, root = source (null/-2 → same as peer), tag for both.
    Sendrecv = 9,
    Wait = 10,
    Waitall = 11,
    Waitany = 12,
    Waitsome = 13,
    Test = 14,
    Testall = 15,
    Testany = 16,
    Testsome = 17,
    /// Explicit computation of `t_end_ns - t_start_ns` (scaled by compute_scale).
    Compute = 18,
    Bsend = 19,
    Rsend = 20,
    Ibsend = 21,
    Irsend = 22,
    /// Communicator management: instantaneous (members come from `comm_members`).
    CommSplit = 23,
    CommDup = 24,
    CommCreate = 25,
    CommFree = 26,
    Barrier = 32,
    Bcast = 33,
    Reduce = 34,
    Allreduce = 35,
    Alltoall = 36,
    Alltoallv = 37,
    Allgather = 38,
    Allgatherv = 39,
    Gather = 40,
    Gatherv = 41,
    Scatter = 42,
    Scatterv = 43,
    ReduceScatter = 44,
    ReduceScatterBlock = 45,
}

/// (name, op) for every code; names are what trace files carry in their `op` column.
pub const OP_TABLE: &[(&str, Op)] = &[
    ("other", Op::Other),
    ("init", Op::Init),
    ("finalize", Op::Finalize),
    ("send", Op::Send),
    ("recv", Op::Recv),
    ("isend", Op::Isend),
    ("irecv", Op::Irecv),
    ("ssend", Op::Ssend),
    ("issend", Op::Issend),
    ("sendrecv", Op::Sendrecv),
    ("wait", Op::Wait),
    ("waitall", Op::Waitall),
    ("waitany", Op::Waitany),
    ("waitsome", Op::Waitsome),
    ("test", Op::Test),
    ("testall", Op::Testall),
    ("testany", Op::Testany),
    ("testsome", Op::Testsome),
    ("compute", Op::Compute),
    ("bsend", Op::Bsend),
    ("rsend", Op::Rsend),
    ("ibsend", Op::Ibsend),
    ("irsend", Op::Irsend),
    ("comm_split", Op::CommSplit),
    ("comm_dup", Op::CommDup),
    ("comm_create", Op::CommCreate),
    ("comm_free", Op::CommFree),
    ("barrier", Op::Barrier),
    ("bcast", Op::Bcast),
    ("reduce", Op::Reduce),
    ("allreduce", Op::Allreduce),
    ("alltoall", Op::Alltoall),
    ("alltoallv", Op::Alltoallv),
    ("allgather", Op::Allgather),
    ("allgatherv", Op::Allgatherv),
    ("gather", Op::Gather),
    ("gatherv", Op::Gatherv),
    ("scatter", Op::Scatter),
    ("scatterv", Op::Scatterv),
    ("reduce_scatter", Op::ReduceScatter),
    ("reduce_scatter_block", Op::ReduceScatterBlock),
];

/// Code → op, built at compile time (decoding is on the engine's hot path).
static LOOKUP: [Option<Op>; 256] = {
    let mut t = [None; 256];
    let mut i = 0;
    while i < OP_TABLE.len() {
        t[OP_TABLE[i].1 as usize] = Some(OP_TABLE[i].1);
        i += 1;
    }
    t
};

impl Op {
    /// The op of a numeric code, or None for a code not in the table.
    #[inline]
    pub fn from_code(code: u8) -> Option<Op> {
        LOOKUP[code as usize]
    }

    pub fn name(self) -> &'static str {
        OP_TABLE
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .unwrap_or("other")
    }

    /// Point-to-point calls (their `peer` must be a rank of the trace).
    pub fn is_p2p(self) -> bool {
        matches!(
            self,
            Op::Send
                | Op::Recv
                | Op::Isend
                | Op::Irecv
                | Op::Ssend
                | Op::Issend
                | Op::Sendrecv
                | Op::Bsend
                | Op::Rsend
                | Op::Ibsend
                | Op::Irsend
        )
    }

    /// The collective this op starts, if it is one.
    pub fn collective(self) -> Option<CollKind> {
        Some(match self {
            Op::Barrier => CollKind::Barrier,
            Op::Bcast => CollKind::Bcast,
            Op::Reduce => CollKind::Reduce,
            Op::Allreduce => CollKind::Allreduce,
            Op::Alltoall => CollKind::Alltoall,
            Op::Alltoallv => CollKind::Alltoallv,
            Op::Allgather => CollKind::Allgather,
            Op::Allgatherv => CollKind::Allgatherv,
            Op::Gather | Op::Gatherv => CollKind::Gather,
            Op::Scatter | Op::Scatterv => CollKind::Scatter,
            Op::ReduceScatter => CollKind::ReduceScatter,
            Op::ReduceScatterBlock => CollKind::ReduceScatterBlock,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_names_unique() {
        let mut names: Vec<&str> = OP_TABLE.iter().map(|(n, _)| *n).collect();
        for &(name, op) in OP_TABLE {
            assert_eq!(Op::from_code(op as u8), Some(op));
            assert_eq!(op.name(), name);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), OP_TABLE.len());
        assert_eq!(Op::from_code(200), None);
    }
}
