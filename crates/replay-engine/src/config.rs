//! Typed configuration of a replay: the fabric (already parsed and validated from TOML on the
//! Python side — the engine never reads files), host costs and replay options.

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

/// Contention-free cost models.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LogGpParams {
    /// α-β-γ (Hockney with reduction cost): a message of n bytes costs α + nβ.
    AlphaBeta {
        alpha_ns: f64,
        beta_ns_per_byte: f64,
    },
    /// LogGP (Alexandrov et al. 1995): latency L, gap g between messages and G per byte at
    /// the sender's NIC.
    LogGp {
        l_ns: f64,
        g_ns: f64,
        g_ns_per_byte: f64,
    },
}

/// Link sharing of a cable: two independent directions, or one shared by both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplex {
    Full,
    Half,
}

/// Topology graph of the flow model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    /// One switch, every endpoint on its own up/down link.
    Crossbar { endpoints: u32 },
    /// k-ary n-tree (Petrini & Vanneschi 1997): k^n endpoints, n levels of k^(n-1) switches.
    FatTree { k: u32, n: u32 },
    /// 3-D torus, one endpoint per router, dimension-order routing.
    Torus3d { x: u32, y: u32, z: u32 },
}

/// How a route is picked among equal-cost paths (fat tree up-ports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Routing {
    /// Deterministic destination-mod-k (d-mod-k, Zahavi 2010).
    DModK,
    /// A seeded random up-port per flow (ECMP-like).
    Random,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlowParams {
    pub topology: Topology,
    pub link_bandwidth_gbps: f64,
    pub hop_latency_ns: f64,
    pub duplex: Duplex,
    pub routing: Routing,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FabricConfig {
    LogGp(LogGpParams),
    Flow(FlowParams),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FabricSpec {
    pub fabric: FabricConfig,
    pub host: HostParams,
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
}

#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// Messages of more than this many bytes use rendezvous (seed 004: 8 KiB).
    pub eager_threshold_bytes: u64,
    /// Factor on captured compute gaps (0 = communication only).
    pub compute_scale: f64,
    /// Seed of every random choice (placement, routing).
    pub seed: u64,
    /// `--coll` override text, e.g. "allreduce=ring,bcast=binomial".
    pub coll_overrides: String,
    /// Evaluate collectives in closed form where the fabric allows it (stateless α-β);
    /// the results are identical either way, this only exists to test that.
    pub closed_form_collectives: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            eager_threshold_bytes: 8192,
            compute_scale: 1.0,
            seed: 0,
            coll_overrides: String::new(),
            closed_form_collectives: true,
        }
    }
}
