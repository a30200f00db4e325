//! Typed configuration of a replay besides the fabric model (fabric/registry.rs): the host
//! costs a fabric file declares, where ranks sit, and replay options. The engine never
//! reads files; the binding converts what Python parsed.

use crate::fabric::schema::{Config, DefaultValue, Param, Type};

/// Host-side costs (LogGP's o and O, and the reduction cost γ of Thakur et al. 2005).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HostParams {
    /// CPU overhead per message on send and on receive (LogGP o), ns.
    pub overhead_ns: f64,
    /// CPU overhead per byte (LogGOPS O), ns/B.
    pub overhead_ns_per_byte: f64,
    /// Local reduction cost per byte (γ), ns/B.
    pub gamma_ns_per_byte: f64,
    /// Whether messages above the eager threshold pay a rendezvous handshake (RTS/CTS).
    /// The α-β-γ form has none (a message costs exactly α + nβ).
    pub handshake: bool,
}

const NON_NEGATIVE: Type = Type::Float {
    min: 0.0,
    max: f64::INFINITY,
};

const GAMMA_PARAM: Param = Param {
    key: "gamma_ns_per_byte",
    ty: NON_NEGATIVE,
    default: DefaultValue::Float(0.0),
    doc: "reduction cost gamma per byte combined (host)",
};

/// The reduction cost alone (models with their own spelling of the overheads).
pub const GAMMA: &[Param] = &[GAMMA_PARAM];

/// Host costs of the network models: per-message and per-byte CPU overhead, reduction cost.
pub const HOST: &[Param] = &[
    Param {
        key: "overhead_ns",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "CPU overhead o per message at sender and receiver (host)",
    },
    Param {
        key: "overhead_ns_per_byte",
        ty: NON_NEGATIVE,
        default: DefaultValue::Float(0.0),
        doc: "CPU overhead per byte O at sender and receiver (host)",
    },
    GAMMA_PARAM,
];

/// The host costs of a configuration that declares the `HOST` group (with handshake).
pub fn host_params(c: &Config) -> HostParams {
    HostParams {
        overhead_ns: c.f64("overhead_ns"),
        overhead_ns_per_byte: c.f64("overhead_ns_per_byte"),
        gamma_ns_per_byte: c.f64("gamma_ns_per_byte"),
        handshake: true,
    }
}

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
    /// Messages of more than this many bytes use rendezvous (seed 004: 8 KiB).
    pub eager_threshold_bytes: u64,
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
            eager_threshold_bytes: 8192,
            compute_scale: 1.0,
            seed: 0,
            coll_overrides: String::new(),
            closed_form_collectives: true,
            record_messages: None,
        }
    }
}
