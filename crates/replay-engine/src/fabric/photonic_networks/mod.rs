//! Photonic networks: networks of photonic switches whose circuits are set up hop by hop.
//! - banyan_circuit/: seed 003's Gemini, model `banyan_circuit`: an optical Banyan whose
//!   circuits are set up and torn down by signals on an electrical control Banyan.
//! - segment_switching/: seed 002's circuit, packetised-circuit and segment switching over
//!   WDM links, model `photonic_segment`.
//! - circuit_net.rs: the channel reservation both segment switching and seed 004's chip
//!   (photonic_switches/circuit_setup.rs) use, and the hop-by-hop walk (`HopGraph`) the
//!   topologies of flow/graphs/ offer them.

pub mod banyan_circuit;
pub mod circuit_net;
pub mod segment_switching;
