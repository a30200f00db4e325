//! The packet engine (issue 39): messages cut into packets that cross the same topologies
//! and routing rules as the flow model, hop by hop, through finite input buffers with
//! virtual channels and credit-based flow control — so queueing delay, head-of-line
//! blocking and back-pressure emerge instead of max-min rates. A topology model selects it
//! with `contention = "packet"` and its `[packet]` table (params.rs).
//!
//! - `params.rs`: the declared parameters;
//! - `topology.rs`: what a topology provides (per-link latency, router delay, per-packet
//!   route, virtual-channel class per hop = its deadlock-freedom rule);
//! - `network.rs`: port state (busy times, credits, input FIFOs) in arrays by port;
//! - `packets.rs`: packets in flight and their messages;
//! - `engine.rs`: the event loop, arbitration and the `Fabric` face;
//! - `shaper.rs`: token-bucket output ports (htb's packet rule);
//! - `stats.rs`: counters and buffer-occupancy percentiles;
//! - `virtual_queues.rs`: hybrid mode's background, a virtual queue per port;
//! - `background_trains.rs`: the background's demands as the trains each port's virtual
//!   queue is fed.

pub mod background_trains;
pub mod engine;
pub mod network;
pub mod packets;
pub mod params;
pub mod shaper;
pub mod stats;
pub mod topology;
pub mod virtual_queues;

pub use engine::PacketNetwork;
pub use params::PacketParams;
