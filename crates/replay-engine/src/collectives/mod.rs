//! Collective operations decomposed into point-to-point schedules the way Open MPI 4.1's
//! `coll/tuned` component does: `decide` reproduces its fixed decision rules
//! (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, v4.1.x) and `schedule` produces one
//! rank's part of the selected algorithm (ompi/mca/coll/base/coll_base_*.c) as a list of
//! lockstep [`Step`]s, which the engine runs (engine/collective.rs) or evaluates in closed
//! form (engine/plan.rs).

use std::collections::HashMap;
use std::fmt;

pub mod allgather;
pub mod allreduce;
pub mod alltoall;
pub mod barrier;
pub mod bcast;
pub mod decision;
pub mod gather_scatter;
pub mod halving;
pub mod names;
pub mod reduce;
pub mod reduce_scatter;
pub mod topo;
pub mod util;

/// One step of one rank's part of a collective. All sends and receives of a step are posted
/// together (nonblocking); the step completes when all of them completed (waitall); then
/// `reduce_bytes` bytes are combined locally (costs gamma * reduce_bytes), then the next step.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Step {
    /// (peer rank within the communicator, bytes)
    pub sends: Vec<(u32, u64)>,
    /// (peer rank within the communicator, bytes)
    pub recvs: Vec<(u32, u64)>,
    pub reduce_bytes: u64,
}

/// The collectives Open MPI's `coll/tuned` decides for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollKind {
    Bcast,
    Reduce,
    Allreduce,
    Alltoall,
    Alltoallv,
    Allgather,
    Allgatherv,
    Gather,
    Scatter,
    ReduceScatter,
    ReduceScatterBlock,
    Barrier,
}

/// Every algorithm Open MPI 4.1 `coll/tuned` can select (numeric ids per collective are in
/// `names.rs`). `Linear` is Open MPI's "basic_linear"; `Nonoverlapping` is reduce followed by
/// bcast (allreduce) or reduce followed by scatterv (reduce_scatter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Algo {
    Linear,
    LinearSync,
    LinearNb,
    Binomial,
    Knomial,
    Binary,
    Pipeline,
    Chain,
    SplitBinary,
    ScatterAllgather,
    ScatterAllgatherRing,
    Ring,
    SegmentedRing,
    RecursiveDoubling,
    RecursiveHalving,
    Rabenseifner,
    Pairwise,
    Bruck,
    NeighborExchange,
    TwoProc,
    DoubleRing,
    InOrderBinary,
    Nonoverlapping,
    Butterfly,
    Tree,
}

/// Tuning parameters of an algorithm, as the decision function passes them to coll/base.
/// `segsize` 0 means "no segmentation"; `fanout` is the tree fan-out (chain count for
/// chain/pipeline, radix for knomial).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AlgoParams {
    pub segsize: u64,
    pub fanout: u32,
}

/// Description of one collective call on one communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollSpec {
    pub kind: CollKind,
    pub comm_size: u32,
    pub root: u32,
    /// Bytes per OSU convention for the collective: bcast/reduce/allreduce: whole buffer;
    /// alltoall/allgather/gather/scatter: per-peer block; reduce_scatter: whole vector;
    /// reduce_scatter_block: per-rank block.
    pub bytes: u64,
    /// For v-variants: per-peer counts in bytes, else empty. Alltoallv: this rank's send
    /// bytes to each peer. Allgatherv: every rank's contribution (MPI's recvcounts, the same
    /// on every rank). ReduceScatter: optional recvcounts per rank (empty = even split).
    pub per_peer_bytes: Vec<u64>,
    /// Alltoallv only: bytes this rank receives from each peer (empty = same as sent).
    pub recv_per_peer_bytes: Vec<u64>,
    /// Size of one datatype element in bytes (Open MPI's decisions and block splits count
    /// elements, e.g. ring allreduce falls back when count < p). 0 is treated as 1.
    pub elem_bytes: u32,
}

impl CollSpec {
    /// A non-v collective with 1-byte elements (MPI_CHAR / MPI_BYTE, as OSU's default).
    pub fn new(kind: CollKind, comm_size: u32, root: u32, bytes: u64) -> Self {
        Self {
            kind,
            comm_size,
            root,
            bytes,
            per_peer_bytes: Vec::new(),
            recv_per_peer_bytes: Vec::new(),
            elem_bytes: 1,
        }
    }

    /// Element size in bytes, never 0.
    pub fn elem(&self) -> u64 {
        u64::from(self.elem_bytes.max(1))
    }

    /// Element count of `bytes` (rounded down; partial elements cannot exist in MPI).
    pub fn count(&self) -> u64 {
        self.bytes / self.elem()
    }
}

/// Why a schedule or an override could not be produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollError {
    /// `comm_size` is 0, `root` or `me` is outside the communicator, or v-counts have the
    /// wrong length.
    BadSpec(String),
    /// The algorithm does not exist for this collective in Open MPI 4.1.
    Unsupported { kind: CollKind, algo: Algo },
    /// Override text could not be parsed.
    BadOverride(String),
}

impl fmt::Display for CollError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadSpec(m) => write!(f, "invalid collective: {m}"),
            Self::Unsupported { kind, algo } => {
                write!(f, "algorithm {algo:?} is not available for {kind:?}")
            }
            Self::BadOverride(m) => write!(f, "invalid --coll override: {m}"),
        }
    }
}

impl std::error::Error for CollError {}

/// Open MPI 4.1 coll/tuned fixed decision (coll_tuned_decision_fixed.c, v4.1.x): returns the
/// algorithm and its parameters (segment size, fan-out) for this call.
pub fn decide(spec: &CollSpec) -> (Algo, AlgoParams) {
    decision::decide(spec)
}

fn validate(spec: &CollSpec, me: u32) -> Result<(), CollError> {
    let p = spec.comm_size;
    if p == 0 {
        return Err(CollError::BadSpec("communicator size 0".into()));
    }
    if me >= p || spec.root >= p {
        return Err(CollError::BadSpec(format!(
            "rank {me} / root {} outside a communicator of {p}",
            spec.root
        )));
    }
    let needs_v = matches!(spec.kind, CollKind::Alltoallv | CollKind::Allgatherv);
    let len_ok = |v: &Vec<u64>| v.is_empty() || v.len() == p as usize;
    if (needs_v && spec.per_peer_bytes.len() != p as usize)
        || !len_ok(&spec.per_peer_bytes)
        || !len_ok(&spec.recv_per_peer_bytes)
    {
        return Err(CollError::BadSpec(format!(
            "{:?}: per-peer byte counts must have {p} entries, got {} / {}",
            spec.kind,
            spec.per_peer_bytes.len(),
            spec.recv_per_peer_bytes.len()
        )));
    }
    Ok(())
}

/// The schedule of rank `me` (0-based within the communicator). Open MPI's own fallbacks
/// (e.g. ring allreduce with count < p runs recursive doubling) are applied; an algorithm
/// the collective does not have in Open MPI 4.1 is an error.
pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
) -> Result<Vec<Step>, CollError> {
    validate(spec, me)?;
    if names::id_of(spec.kind, algo).is_none() {
        return Err(CollError::Unsupported {
            kind: spec.kind,
            algo,
        });
    }
    if spec.comm_size == 1 {
        return Ok(Vec::new());
    }
    let steps = match spec.kind {
        CollKind::Bcast => bcast::schedule(spec, algo, params, me)?,
        CollKind::Reduce => reduce::schedule(spec, algo, params, me)?,
        CollKind::Allreduce => allreduce::schedule(spec, algo, params, me)?,
        CollKind::Alltoall | CollKind::Alltoallv => alltoall::schedule(spec, algo, params, me)?,
        CollKind::Allgather | CollKind::Allgatherv => allgather::schedule(spec, algo, params, me)?,
        CollKind::Gather | CollKind::Scatter => gather_scatter::schedule(spec, algo, params, me)?,
        CollKind::ReduceScatter | CollKind::ReduceScatterBlock => {
            reduce_scatter::schedule(spec, algo, params, me)?
        }
        CollKind::Barrier => barrier::schedule(spec.comm_size, algo, me)?,
    };
    Ok(steps.into_iter().filter(|s| !s.is_empty()).collect())
}

/// Parse "--coll allreduce=ring,bcast=binomial" overrides (names and Open MPI numeric ids).
pub fn parse_overrides(text: &str) -> Result<HashMap<CollKind, Algo>, CollError> {
    names::parse_overrides(text)
}

#[cfg(test)]
mod consistency;
