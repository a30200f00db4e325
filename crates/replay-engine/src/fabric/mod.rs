//! Network models behind one trait. A fabric carries *transfers* (the data of one message)
//! between endpoints and decides, per transfer:
//! - the **route** (links used; adaptive models may pick one per transfer),
//! - **admission** (when it may start: immediately for packet/flow switching; after circuit
//!   reservation, arbitration, a TDM slot or a free segment buffer in the photonic models),
//! - its **rate** (max-min fair share of every link on the route, or a dedicated circuit rate),
//! - extra **latency** (per hop, serialization, reconfiguration).
//!
//! The engine drives a fabric as a co-simulator sharing its clock: `submit` at the current
//! time, `next_time` to learn the next instant the fabric has something to report, and
//! `advance` to collect the transfers delivered up to that instant. Calls come in
//! non-decreasing time. A contention-free model answers `submit` with the delivery time at
//! once (`Submitted::At`), which keeps the engine's hot path free of fabric bookkeeping.

pub mod flow;
pub mod loggp;
pub mod maxmin;
pub mod topology;

use crate::config::{FabricConfig, FabricSpec};
use crate::prng::SplitMix64;

/// Simulated time in nanoseconds.
pub type Time = f64;

/// Engine-side identifier of a transfer (the message it carries).
pub type TransferId = u32;

/// What a fabric says about a transfer it was just given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Submitted {
    /// Delivered (last byte at the destination) at this time; the fabric forgets it.
    At(Time),
    /// The fabric reports the delivery later through `advance`.
    Later,
}

pub trait Fabric: Send {
    /// Short model name for messages.
    fn name(&self) -> &'static str;
    /// Number of endpoints, or None if any endpoint id is valid (contention-free models).
    fn endpoints(&self) -> Option<u32>;
    /// The links a transfer from `src` to `dst` would use now (empty for models without a
    /// topology, or for two ranks on one endpoint).
    fn route(&mut self, src: u32, dst: u32, links: &mut Vec<u32>);
    /// One-way latency of a zero-byte control message (rendezvous RTS/CTS; the circuit
    /// models will send their setup requests with it).
    fn control_latency(&mut self, src: u32, dst: u32) -> Time;
    /// Starts (or queues for admission) a transfer of `bytes` at time `now`.
    fn submit(&mut self, now: Time, id: TransferId, src: u32, dst: u32, bytes: u64) -> Submitted;
    /// The next instant at which `advance` would report something; None if idle.
    fn next_time(&mut self) -> Option<Time>;
    /// Moves the fabric to `now` and appends every transfer delivered at or before it.
    fn advance(&mut self, now: Time, delivered: &mut Vec<(TransferId, Time)>);
    /// Stateless α-β models only: (α, β) such that `submit(now, .., n)` always answers
    /// exactly `now + α + n·β` (evaluated in that order), whatever the endpoints and the
    /// history. It lets the engine evaluate collectives in closed form. None otherwise.
    fn alpha_beta(&self) -> Option<(f64, f64)> {
        None
    }
    /// Whether transfers can be in flight inside the fabric (`next_time` / `advance` then
    /// matter). Models answering every `submit` at once say false, and the engine skips
    /// asking them for their next event.
    fn holds_transfers(&self) -> bool {
        true
    }
}

/// Builds the fabric a configuration describes; `rng` drives random routing choices.
pub fn build(spec: &FabricSpec, seed: u64) -> Result<Box<dyn Fabric>, String> {
    match spec.fabric {
        FabricConfig::LogGp(params) => Ok(Box::new(loggp::LogGpFabric::new(params)?)),
        FabricConfig::Flow(params) => Ok(Box::new(flow::FlowFabric::new(
            params,
            SplitMix64::new(seed ^ 0xFAB),
        )?)),
    }
}
