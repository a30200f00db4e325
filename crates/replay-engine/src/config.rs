//! Typed configuration of a replay besides the fabric file (fabric/registry.rs, with its
//! host model in fabric/host.rs): where ranks sit, synthetic background jobs (run by
//! engine/background.rs), and replay options. The engine never
//! reads files; the binding converts what Python parsed.

/// Where the ranks of one trace sit on the fabric's endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// Block placement: ceil(ranks / endpoints) consecutive ranks per endpoint, from `offset`.
    Linear { offset: u32 },
    /// Block placement over a seeded random permutation of the endpoints.
    Random { seed: u64 },
    /// Endpoint of every rank.
    Explicit(Vec<u32>),
    /// `nodes` endpoints of one locality class (fabrics with groups and islands), chosen
    /// with `seed`; ranks in blocks over them.
    Locality {
        class: LocalityClass,
        nodes: u32,
        seed: u64,
    },
}

/// Seed 001's placement classes: all nodes in one group; in one island over several
/// groups; over several islands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalityClass {
    SameGroup,
    SameIsland,
    DifferentIslands,
}

impl LocalityClass {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "same_group" => Some(Self::SameGroup),
            "same_island" => Some(Self::SameIsland),
            "different_islands" => Some(Self::DifferentIslands),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// Messages of more than this many bytes use rendezvous; None: the threshold of the
    /// fabric file's host model (fabric/host.rs).
    pub eager_threshold_bytes: Option<u64>,
    /// Factor on captured compute gaps (0 = communication only).
    pub compute_scale: f64,
    /// Seed of every random choice (placement, routing, background traffic).
    pub seed: u64,
    /// `--coll` override text, e.g. "allreduce=ring,bcast=binomial".
    pub coll_overrides: String,
    /// Evaluate collectives in closed form where the fabric allows it (stateless α-β);
    /// the results are identical either way, this only exists to test that.
    pub closed_form_collectives: bool,
    /// Record one row per delivered message (None: when the fabric reports per-transfer
    /// information).
    pub record_messages: Option<bool>,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            eager_threshold_bytes: None,
            compute_scale: 1.0,
            seed: 0,
            coll_overrides: String::new(),
            closed_form_collectives: true,
            record_messages: None,
        }
    }
}

/// Where a background node sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    /// Any other node of the job, uniformly.
    Uniform,
    /// Its successor in the job's node list (a ring).
    NearestNeighbour,
    /// Every other node in turn (node i sends to i+1, i+2, …).
    AllToAll,
    /// A fixed random derangement of the job's nodes.
    Permutation,
    /// The job's first node with probability `fraction`, otherwise uniform.
    HotSpot { fraction: f64 },
}

/// How a node spaces its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process) with the mean the load gives.
    Poisson,
    /// Constant gaps, each node starting at a random phase.
    Periodic,
}

/// What every node of a synthetic background job sends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traffic {
    pub pattern: Pattern,
    /// Size of every message.
    pub bytes: u64,
    /// Offered load per node, as a fraction of its injection bandwidth, in [0, 1].
    pub load: f64,
    pub arrivals: Arrivals,
}

/// One background job on its endpoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Generator {
    pub traffic: Traffic,
    /// Fabric endpoints of its nodes (at least 2).
    pub endpoints: Vec<u32>,
}
