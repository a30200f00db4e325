//! Collective operations decomposed into point-to-point programs the way Open MPI 4.1.4's
//! `coll/tuned` component runs them: `Selector` reproduces its fixed decision rules
//! (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c, tag v4.1.4) or a forced algorithm with
//! the forced-mode parameters (coll_tuned_<coll>_algorithm_segmentsize, _chain_fanout,
//! _max_requests), and `schedule` produces one rank's part of the selected algorithm
//! (ompi/mca/coll/base/coll_base_*.c, coll/basic for gatherv/scatterv) as a [`Program`]:
//! the isends, irecvs, waits and reductions in the order that code issues them, with every
//! fallback of the base functions judged on element counts and op commutativity.

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
pub mod program;
pub mod reduce;
pub mod reduce_scatter;
pub mod reduce_scatter_block;
pub mod topo;
pub mod util;

pub use program::{Instr, Program, Req};

/// The collectives Open MPI's `coll/tuned` decides for, plus gatherv/scatterv (coll/basic).
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
    Gatherv,
    Scatter,
    Scatterv,
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

/// Parameters an algorithm receives from coll/tuned: segment size in bytes (0 = one
/// segment), fan-out (chain count of chain algorithms), the request window of
/// linear_sync alltoall / reduce leaves / linear_nb scatter (0 = no limit), k-nomial radix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AlgoParams {
    pub segsize: u64,
    pub fanout: u32,
    pub max_requests: u32,
    pub radix: u32,
}

impl AlgoParams {
    /// What the fixed rules pass: `*_intra_do_this(..., alg, 0, 0)` (faninout 0, segsize
    /// 0; alltoall ompi_coll_tuned_alltoall_max_requests = 0, reduce 0), and
    /// coll_tuned_bcast_knomial_radix = 4.
    pub const FIXED: AlgoParams = AlgoParams {
        segsize: 0,
        fanout: 0,
        max_requests: 0,
        radix: 4,
    };
    /// A forced algorithm's MCA defaults: coll_tuned_<coll>_algorithm_segmentsize 0,
    /// _tree_fanout = _chain_fanout = 4 (ompi_coll_tuned_init_*_fanout), max_requests 0,
    /// radix 4 (coll_tuned_component.c, coll_tuned_*_decision.c).
    pub const FORCED: AlgoParams = AlgoParams {
        segsize: 0,
        fanout: 4,
        max_requests: 0,
        radix: 4,
    };
}

/// Description of one collective call on one communicator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CollSpec {
    pub kind: CollKind,
    pub comm_size: u32,
    pub root: u32,
    /// Bytes per MPI's argument (= OSU's size) convention: bcast/reduce/allreduce the whole
    /// buffer; alltoall/allgather/gather/scatter the per-peer block; reduce_scatter the
    /// whole vector; reduce_scatter_block one block; gatherv (scatterv) this rank's send
    /// (receive) block.
    pub bytes: u64,
    /// For v-variants: per-peer counts in bytes, else empty. Alltoallv: this rank's send
    /// bytes to each peer. Allgatherv: every rank's contribution (MPI's recvcounts, the same
    /// on every rank). ReduceScatter: optional recvcounts per rank (empty = even split).
    /// Gatherv / scatterv: the root's recvcounts / sendcounts.
    pub per_peer_bytes: Vec<u64>,
    /// Alltoallv only: bytes this rank receives from each peer (empty = same as sent).
    pub recv_per_peer_bytes: Vec<u64>,
    /// Size of one datatype element in bytes (MPI_Type_size; 0 is treated as 1). Open MPI's
    /// fallbacks and block splits count elements.
    pub elem_bytes: u32,
    /// Whether the reduction operation is commutative (ompi_op_is_commute).
    pub commutative: bool,
}

impl CollSpec {
    /// A non-v collective with 1-byte elements and a commutative op: MPI_CHAR and MPI_SUM,
    /// OSU 7.4's defaults, and the documented default for traces that do not say.
    pub fn new(kind: CollKind, comm_size: u32, root: u32, bytes: u64) -> Self {
        Self {
            kind,
            comm_size,
            root,
            bytes,
            per_peer_bytes: Vec::new(),
            recv_per_peer_bytes: Vec::new(),
            elem_bytes: 1,
            commutative: true,
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

    /// The same call as another collective (a collective built from others).
    pub fn as_kind(&self, kind: CollKind, root: u32, bytes: u64) -> CollSpec {
        CollSpec {
            kind,
            root,
            bytes,
            per_peer_bytes: Vec::new(),
            recv_per_peer_bytes: Vec::new(),
            ..self.clone()
        }
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
    /// Open MPI returns an error for this call (e.g. a two_proc algorithm on 3 ranks).
    Refused(String),
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
            Self::Refused(m) => write!(f, "Open MPI 4.1.4 refuses this call: {m}"),
            Self::BadOverride(m) => write!(f, "invalid --coll override: {m}"),
        }
    }
}

impl std::error::Error for CollError {}

/// How algorithms are chosen: Open MPI's fixed rules, except for the collectives a
/// `--coll` override forces (coll_tuned_use_dynamic_rules with coll_tuned_<coll>_algorithm).
/// Collectives built from other collectives (allreduce nonoverlapping, allgather linear,
/// ...) call them through `comm->c_coll`, so they ask the same selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    forced: Vec<(CollKind, Algo, AlgoParams)>,
}

impl Selector {
    /// Fixed rules for every collective.
    pub fn fixed() -> Self {
        Self::default()
    }

    /// Parses "allreduce=ring,bcast=pipeline:segsize=128K" (see `names::parse_overrides`).
    pub fn parse(text: &str) -> Result<Self, CollError> {
        let map = names::parse_overrides(text)?;
        let mut forced: Vec<(CollKind, Algo, AlgoParams)> =
            map.into_iter().map(|(k, (a, p))| (k, a, p)).collect();
        forced.sort_unstable_by_key(|f| (f.0, f.1));
        Ok(Self { forced })
    }

    /// The algorithm and parameters for this call.
    pub fn select(&self, spec: &CollSpec) -> (Algo, AlgoParams) {
        match self.forced.iter().find(|f| f.0 == spec.kind) {
            Some(&(_, algo, params)) => (algo, params),
            None => decision::decide(spec),
        }
    }
}

/// Open MPI 4.1.4 coll/tuned fixed decision: the algorithm and its parameters.
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

/// The program of rank `me` (0-based within the communicator) for `algo`. Open MPI's own
/// fallbacks are applied; an algorithm the collective does not have in Open MPI 4.1 is an
/// error, and so is a call Open MPI refuses. Collectives that call other collectives ask
/// `sel` for those.
pub fn schedule(
    spec: &CollSpec,
    algo: Algo,
    params: &AlgoParams,
    me: u32,
    sel: &Selector,
) -> Result<Program, CollError> {
    validate(spec, me)?;
    if names::id_of(spec.kind, algo).is_none() {
        return Err(CollError::Unsupported {
            kind: spec.kind,
            algo,
        });
    }
    let mut prog = Program::default();
    if spec.comm_size == 1 || nothing_to_do(spec) {
        return Ok(prog);
    }
    let at = Ctx {
        spec,
        params,
        me,
        sel,
    };
    match spec.kind {
        CollKind::Bcast => bcast::build(&at, algo, &mut prog)?,
        CollKind::Reduce => reduce::build(&at, algo, &mut prog)?,
        CollKind::Allreduce => allreduce::build(&at, algo, &mut prog)?,
        CollKind::Alltoall | CollKind::Alltoallv => alltoall::build(&at, algo, &mut prog)?,
        CollKind::Allgather | CollKind::Allgatherv => allgather::build(&at, algo, &mut prog)?,
        CollKind::Gather | CollKind::Gatherv | CollKind::Scatter | CollKind::Scatterv => {
            gather_scatter::build(&at, algo, &mut prog)?
        }
        CollKind::ReduceScatter => reduce_scatter::build(&at, algo, &mut prog)?,
        CollKind::ReduceScatterBlock => reduce_scatter_block::build(&at, algo, &mut prog)?,
        CollKind::Barrier => barrier::build(spec.comm_size, algo, me, &mut prog)?,
    }
    Ok(prog)
}

/// The MPI layer returns before any communication for a zero count (ompi/mpi/c/bcast.c,
/// reduce.c, allreduce.c, alltoall.c, allgather.c, gather.c, scatter.c,
/// reduce_scatter_block.c: `if (0 == count) return MPI_SUCCESS`; reduce_scatter.c when every
/// recvcount is 0). Barrier and the other v-forms always run.
fn nothing_to_do(spec: &CollSpec) -> bool {
    match spec.kind {
        CollKind::Bcast
        | CollKind::Reduce
        | CollKind::Allreduce
        | CollKind::Alltoall
        | CollKind::Allgather
        | CollKind::Gather
        | CollKind::Scatter
        | CollKind::ReduceScatterBlock => spec.count() == 0,
        CollKind::ReduceScatter => {
            spec.count() == 0 && spec.per_peer_bytes.iter().all(|&b| b < spec.elem())
        }
        _ => false,
    }
}

/// What a program builder needs: the call, its parameters, the rank, and the selector for
/// the collectives it calls.
pub struct Ctx<'a> {
    pub spec: &'a CollSpec,
    pub params: &'a AlgoParams,
    pub me: u32,
    pub sel: &'a Selector,
}

impl Ctx<'_> {
    /// Appends the program of another collective called through `comm->c_coll` (chosen by
    /// the selector).
    pub fn call(&self, spec: &CollSpec, prog: &mut Program) -> Result<(), CollError> {
        let (algo, params) = self.sel.select(spec);
        let sub = schedule(spec, algo, &params, self.me, self.sel)?;
        prog.append(&sub);
        Ok(())
    }

    pub fn unsupported(&self, algo: Algo) -> CollError {
        CollError::Unsupported {
            kind: self.spec.kind,
            algo,
        }
    }
}

/// Parse "--coll allreduce=ring,bcast=pipeline:segsize=128K" overrides (names and Open MPI
/// numeric ids; parameters segsize, fanout, max_requests, radix).
pub fn parse_overrides(text: &str) -> Result<HashMap<CollKind, (Algo, AlgoParams)>, CollError> {
    names::parse_overrides(text)
}
